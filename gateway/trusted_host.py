"""Starlette's TrustedHostMiddleware (400 for a `Host` not served), except for the health
probes, which Kubernetes sends to the pod's IP."""

from __future__ import annotations

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

PROBES = frozenset({"/healthz", "/readyz"})


class TrustedHost:
    def __init__(self, app: ASGIApp, allowed_hosts: list[str]) -> None:
        self.app = app
        self.checked = TrustedHostMiddleware(app, allowed_hosts=allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in PROBES:
            await self.app(scope, receive, send)
        else:
            await self.checked(scope, receive, send)
