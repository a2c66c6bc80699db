"""Refusals on the wire, in one place: error codes to HTTP statuses, WebSocket close codes by
name, and the `{"error": {...}}` body. Anything unexpected becomes close 1011 and a log line."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import redis.exceptions
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError

from actors.orders import CLOSE_REPLACED, CLOSE_SEAT_CHANGED, CLOSE_SEAT_GIVEN
from gateway import metrics

log = logging.getLogger("quatro.errors")

# A backend out of reach, not a bug: Redis down, a table actor gone, restarting or silent. An
# exception raised inside an actor (RayTaskError) is a bug and stays a 500 with its traceback.
BACKEND_DOWN: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    RayActorError,
    ActorUnavailableError,
    GetTimeoutError,
    TimeoutError,
)

# WebSocket close codes (RFC 6455 and the 4000–4999 range PROTOCOL.md uses).
CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL = 1011
# Reconnect later: the client could not keep up with its events, the gateway is full, or Redis
# is out of reach.
CLOSE_TRY_AGAIN = 1013
CLOSE_BAD_TOKEN = 4401
CLOSE_NO_SEAT = 4403
CLOSE_UNKNOWN_TABLE = 4404
# 4409, 4410 and 4411 are the table's to ask for: defined in actors/orders.py.
CLOSE_WATCHING_OFF = 4412  # the host closed the table to watchers

_REASONS = {
    CLOSE_REPLACED: "this seat was taken over by a newer connection",
    CLOSE_SEAT_CHANGED: "your seat changed hands: say hello again",
    CLOSE_SEAT_GIVEN: "the seat you asked for is yours: say hello again to take it",
    CLOSE_WATCHING_OFF: "the host closed this table to watchers",
}


def close_reason(code: int) -> str:
    return _REASONS.get(code, "")


# The close code that follows a refused `hello`, by the error's code.
_CLOSE_FOR = {
    "bad_token": CLOSE_BAD_TOKEN,
    "no_seat": CLOSE_NO_SEAT,
    "watching_off": CLOSE_WATCHING_OFF,
    "unknown_table": CLOSE_UNKNOWN_TABLE,
    "table_lost": CLOSE_UNKNOWN_TABLE,
    "unavailable": CLOSE_TRY_AGAIN,
    "rate_limited": CLOSE_POLICY,
    "flooding": CLOSE_POLICY,
}


def close_code_for(code: str) -> int:
    """How a socket refused with error `code` is closed; 1011 for a code that should never end
    a socket."""
    return _CLOSE_FOR.get(code, CLOSE_INTERNAL)


STATUS = {
    "bad_message": 422,
    "bad_seat": 422,
    "bad_scenario": 422,
    "bad_token": 401,
    "forbidden": 403,
    "not_host": 403,
    "not_allowed": 403,
    "no_seat": 403,
    "unknown_table": 404,
    "table_lost": 404,
    "seat_empty": 404,
    "unknown_replay": 404,
    "seat_taken": 409,
    "already_seated": 409,
    "table_not_full": 409,
    "not_a_bot": 409,
    "already_claimed": 409,
    "no_claim": 404,
    "not_watching": 409,
    "wrong_phase": 409,
    "expired": 409,
    "not_finished": 409,
    "too_large": 413,
    "rate_limited": 429,
    "too_many_lobbies": 429,
    "unavailable": 503,
    "no_room": 503,
}


class ApiError(Exception):
    def __init__(
        self, code: str, message: str, status: int | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status or STATUS.get(code, 409)
        self.retry_after = retry_after  # seconds, sent as `Retry-After` (429, 503)

    @classmethod
    def from_wire(cls, error: dict[str, Any]) -> ApiError:
        return cls(str(error["code"]), str(error["message"]))


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


async def api_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    headers: dict[str, str] = {}
    if exc.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if exc.retry_after is not None:
        headers["Retry-After"] = str(max(1, exc.retry_after))
    return JSONResponse(error_body(exc.code, exc.message), exc.status, headers=headers)


def unavailable_handler(retry_after_s: int) -> Callable[[Request, Exception], Awaitable[Response]]:
    """Redis or a table actor out of reach: our trouble, told as `503 unavailable` with
    `Retry-After` rather than a plain-text 500 (the live games go on meanwhile)."""

    async def handler(request: Request, exc: Exception) -> Response:
        log.warning("%s %s: unavailable (%r)", request.method, request.url.path, exc)
        error = ApiError("unavailable", "a backend is out of reach, retry", 503, retry_after_s)
        return await api_error_handler(request, error)

    return handler


def no_room_handler(retry_after_s: int) -> Callable[[Request, Exception], Awaitable[Response]]:
    """Every table slot is taken: a new table is refused at once (`503 no_room`) rather than
    queued in Ray, where it would wait ahead of a crashed table's restart (actors.slots)."""

    async def handler(request: Request, exc: Exception) -> Response:
        log.warning("%s %s: no room for a new table", request.method, request.url.path)
        metrics.ERRORS.labels("no_room").inc()
        error = ApiError("no_room", "every table is in use, retry soon", 503, retry_after_s)
        return await api_error_handler(request, error)

    return handler


async def validation_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    where = "; ".join(
        f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
    )
    return JSONResponse(error_body("bad_message", where or "malformed request"), 422)


def error_frame(frame_id: str | None, code: str, message: str, **extra: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "error", "id": frame_id, "code": code, "message": message}
    frame.update({k: v for k, v in extra.items() if v is not None})
    return frame
