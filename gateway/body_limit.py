"""A size limit on every HTTP request body, as plain ASGI middleware: refused with 413 from
`Content-Length` before a byte of the body is read, or, for a chunked body, as soon as the bytes
received pass the limit (the rest is never read)."""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.errors import ErrorBody, ErrorCode
from gateway.errors import error_body


class BodyTooLarge(HTTPException):
    """A streamed body passed the limit while the app was reading it. An HTTPException, because
    FastAPI turns any other error raised while it reads a body into a 400."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, _message(max_bytes))


def _message(max_bytes: int) -> str:
    return f"request bodies are limited to {max_bytes} bytes"


async def body_too_large_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BodyTooLarge)
    return JSONResponse(
        error_body(ErrorBody(ErrorCode.TOO_LARGE, str(exc.detail))), 413, {"Connection": "close"}
    )


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = _content_length(scope)
        if length is not None and length > self.max_bytes:
            await _refuse(send, self.max_bytes)
            return
        seen = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyTooLarge:
            if not started:
                await _refuse(send, self.max_bytes)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse(send: Send, max_bytes: int) -> None:
    body = json.dumps(error_body(ErrorBody(ErrorCode.TOO_LARGE, _message(max_bytes))))
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body.encode()})
