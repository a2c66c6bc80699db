"""Security headers on every HTTP answer, as plain ASGI middleware: nosniff, no framing, no
referrer to other sites; and on the web client's pages and files, a Content-Security-Policy
without 'unsafe-inline': index.html's one inline block (the import map) is allowed by its
SHA-256, computed from the file at startup."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL)

COMMON = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
]


def inline_script_hashes(page: Path) -> list[str]:
    """CSP sources for each inline <script> of `page` (none when the page is missing)."""
    if not page.is_file():
        return []
    return [
        f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'"
        for body in INLINE_SCRIPT.findall(page.read_bytes())
    ]


def content_security_policy(script_hashes: list[str]) -> str:
    scripts = " ".join(["'self'", *script_hashes])
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src {scripts}",
            "style-src 'self'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def _page(path: str) -> bool:
    return path in ("/", "/profile") or path.startswith(
        ("/t/", "/static/", "/replay/", "/p/", "/leaderboard/")
    )


class SecurityHeaders:
    def __init__(self, app: ASGIApp, index: Path) -> None:
        self.app = app
        self.csp = content_security_policy(inline_script_hashes(index)).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = list(COMMON)
        if _page(scope["path"]):
            extra.append((b"content-security-policy", self.csp))

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)
