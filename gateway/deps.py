"""Dependencies of the REST routes, as `Annotated` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, params
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engine.errors import ErrorCode
from gateway.client_ip import from_scope
from gateway.errors import ApiError
from gateway.services import Services
from gateway.sessions import Session


def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


Svc = Annotated[Services, Depends(get_services)]


# The protocol's auth, as the OpenAPI's security scheme `bearer`. Not FastAPI's refusal (a 403
# in its own shape): a missing or wrong token is ours to refuse, `401 bad_token`.
bearer = HTTPBearer(
    scheme_name="bearer",
    description="the token from POST /api/sessions, as `Authorization: Bearer <token>`",
    auto_error=False,
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def client_ip(request: Request, svc: Svc) -> str:
    """The real client's address (X-Forwarded-For believed only from trusted proxies)."""
    return from_scope(dict(request.scope), svc.proxies)


ClientIp = Annotated[str, Depends(client_ip)]


async def current_session(svc: Svc, credentials: Credentials, ip: ClientIp) -> Session:
    """The caller's session from `Authorization: Bearer <token>`, used from the caller's
    address; 401 `bad_token` otherwise."""
    token = credentials.credentials.strip() if credentials else ""
    session = await svc.sessions.lookup(token, ip) if token else None
    if session is None:
        raise ApiError(
            ErrorCode.BAD_TOKEN, "send Authorization: Bearer <token> from POST /api/sessions"
        )
    return session


Me = Annotated[Session, Depends(current_session)]


def quota(kind: str) -> params.Depends:
    """A dependency taking one token of `kind` for the client's IP: 429 `rate_limited`."""

    async def take(svc: Svc, ip: ClientIp) -> None:
        await svc.limits.take(kind, ip)

    depends: params.Depends = Depends(take)
    return depends
