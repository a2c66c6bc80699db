"""Dependencies of the REST routes, as `Annotated` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from gateway.errors import ApiError
from gateway.services import Services
from gateway.sessions import Session


def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


Svc = Annotated[Services, Depends(get_services)]


async def current_session(
    svc: Svc, authorization: Annotated[str | None, Header()] = None
) -> Session:
    """The caller's session from `Authorization: Bearer <token>`; 401 `bad_token` otherwise."""
    scheme, _, token = (authorization or "").partition(" ")
    session = await svc.sessions.lookup(token.strip()) if scheme.lower() == "bearer" else None
    if session is None:
        raise ApiError("bad_token", "send Authorization: Bearer <token> from POST /api/sessions")
    return session


Me = Annotated[Session, Depends(current_session)]
