"""Security headers on every HTTP answer, as plain ASGI middleware: nosniff, no framing, no
referrer to other sites; and on the web client's pages, files and service worker, a
Content-Security-Policy without 'unsafe-inline'. The page itself sets its own (routes/pages.py),
which adds the SHA-256 of its one inline block, the import map: that block names each module's
version, so its hash is the page's as served (gateway/client_page.py), and this middleware
leaves a policy already set alone."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL)

COMMON = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
]


def inline_script_hashes(page: bytes) -> list[str]:
    """CSP sources for each inline <script> of the HTML `page`."""
    return [
        f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'"
        for body in INLINE_SCRIPT.findall(page)
    ]


def content_security_policy(script_hashes: Sequence[str]) -> str:
    scripts = " ".join(["'self'", *script_hashes])
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src {scripts}",
            "style-src 'self'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "manifest-src 'self'",
            "worker-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def _page(path: str) -> bool:
    return path in ("/", "/sw.js", "/favicon.ico", "/profile") or path.startswith(
        ("/t/", "/replay/", "/static/", "/p/", "/leaderboard/")
    )


CSP = b"content-security-policy"


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.csp = content_security_policy(()).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        page = _page(scope["path"])

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), *COMMON]
                if page and not any(k.lower() == CSP for k, _ in headers):
                    headers.append((CSP, self.csp))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
