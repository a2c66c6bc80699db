"""Dependencies of the REST routes, as `Annotated` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request, params

from engine.errors import ErrorCode
from gateway.client_ip import from_scope
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
        raise ApiError(
            ErrorCode.BAD_TOKEN, "send Authorization: Bearer <token> from POST /api/sessions"
        )
    return session


Me = Annotated[Session, Depends(current_session)]


def client_ip(request: Request, svc: Svc) -> str:
    """The real client's address (X-Forwarded-For believed only from trusted proxies)."""
    return from_scope(dict(request.scope), svc.proxies)


ClientIp = Annotated[str, Depends(client_ip)]


def quota(kind: str) -> params.Depends:
    """A dependency taking one token of `kind` for the client's IP: 429 `rate_limited`."""

    async def take(svc: Svc, ip: ClientIp) -> None:
        await svc.limits.take(kind, ip)

    depends: params.Depends = Depends(take)
    return depends
