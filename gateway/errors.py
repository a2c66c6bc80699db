"""Refusals on the wire, in one place: error codes to HTTP statuses, WebSocket close codes by
name, and the `{"error": {...}}` body. Anything unexpected becomes close 1011 and a log line."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import redis.exceptions
from fastapi import Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError
from starlette.exceptions import HTTPException
from starlette.routing import Match

from actors.cells import CellUnreachable, ForeignTable
from actors.orders import CLOSE_REPLACED, CLOSE_SEAT_CHANGED, CLOSE_SEAT_GIVEN
from engine.errors import ErrorBody, ErrorCode
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
    CellUnreachable,  # no gateway of a table's cell answered (cells: actors/cells.py)
    ForeignTable,  # a table moving between cells, still so at the end of the wait
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
_CLOSE_FOR: dict[str, int] = {
    ErrorCode.BAD_TOKEN: CLOSE_BAD_TOKEN,
    ErrorCode.NO_SEAT: CLOSE_NO_SEAT,
    ErrorCode.WATCHING_OFF: CLOSE_WATCHING_OFF,
    ErrorCode.UNKNOWN_TABLE: CLOSE_UNKNOWN_TABLE,
    ErrorCode.TABLE_LOST: CLOSE_UNKNOWN_TABLE,
    ErrorCode.UNAVAILABLE: CLOSE_TRY_AGAIN,
    ErrorCode.RATE_LIMITED: CLOSE_POLICY,
    ErrorCode.FLOODING: CLOSE_POLICY,
}


def close_code_for(code: str) -> int:
    """How a socket refused with error `code` is closed; 1011 for a code that should never end
    a socket."""
    return _CLOSE_FOR.get(code, CLOSE_INTERNAL)


# Every code's HTTP status (tests/gateway/test_error_codes.py: each code of the wire has one).
# Keyed by `str`: a code from a table of a later version passes through, as a 409.
STATUS: dict[str, int] = {
    ErrorCode.BAD_MESSAGE: 422,
    ErrorCode.BAD_SEAT: 422,
    ErrorCode.BAD_SCENARIO: 422,
    ErrorCode.BAD_TOKEN: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_HOST: 403,
    ErrorCode.NOT_ALLOWED: 403,
    ErrorCode.NO_SEAT: 403,
    ErrorCode.UNKNOWN_TABLE: 404,
    ErrorCode.TABLE_LOST: 404,
    ErrorCode.SEAT_EMPTY: 404,
    ErrorCode.UNKNOWN_REPLAY: 404,
    ErrorCode.NO_CLAIM: 404,
    ErrorCode.UNKNOWN_PROFILE: 404,
    ErrorCode.UNKNOWN_PASSKEY: 404,
    ErrorCode.BAD_PASSKEY: 401,
    ErrorCode.SEAT_TAKEN: 409,
    ErrorCode.ALREADY_SEATED: 409,
    ErrorCode.TABLE_NOT_FULL: 409,
    ErrorCode.NOT_A_BOT: 409,
    ErrorCode.ALREADY_CLAIMED: 409,
    ErrorCode.NOT_WATCHING: 409,
    ErrorCode.TUTORIAL_STEP: 409,
    ErrorCode.WRONG_PHASE: 409,
    ErrorCode.EXPIRED: 409,
    ErrorCode.NOT_FINISHED: 409,
    ErrorCode.COOLDOWN: 409,
    ErrorCode.STALE: 409,
    ErrorCode.FLOOR_COOLDOWN: 409,
    ErrorCode.NO_FLOOR: 409,
    ErrorCode.SIGN_TAKEN: 409,
    ErrorCode.VOTE_REFUSED: 409,
    # Said over the socket (or by a table's refusal passed through): over REST, a 409 as
    # every code had by default before this map listed them all.
    ErrorCode.UNKNOWN_TYPE: 409,
    ErrorCode.BAD_SLOT: 409,
    ErrorCode.BAD_EMOJI: 409,
    ErrorCode.BAD_TEAM: 409,
    ErrorCode.NOT_VOTER: 409,
    ErrorCode.WATCHING_OFF: 409,
    ErrorCode.NOT_YOUR_CARD: 409,
    ErrorCode.FLOODING: 409,
    ErrorCode.INTERNAL: 409,
    ErrorCode.NOT_FOUND: 409,  # the pages route says 404 itself
    ErrorCode.TOO_LARGE: 413,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.TOO_MANY_LOBBIES: 429,
    ErrorCode.UNAVAILABLE: 503,
    ErrorCode.NO_ROOM: 503,
}


# A table's refusal that came without its reason (never, unless a table has a bug).
NO_REASON = ErrorBody(ErrorCode.INTERNAL, "refused without a reason")


class ApiError(Exception):
    """A refusal over REST: the `ErrorBody` it answers (its code an `ErrorCode`, or a table's
    own passed through: `from_body`), a status (the code's by default) and `Retry-After`."""

    def __init__(
        self, code: str, message: str, status: int | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status or STATUS.get(code, 409)
        self.retry_after = retry_after  # seconds, sent as `Retry-After` (429, 503)

    @classmethod
    def from_body(cls, error: ErrorBody) -> ApiError:
        return cls(error.code, error.message)

    @property
    def body(self) -> ErrorBody:
        return ErrorBody(self.code, self.message)


def error_body(error: ErrorBody) -> dict[str, Any]:
    """The JSON body of a refusal over REST."""
    return {"error": error.to_wire()}


async def api_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    headers: dict[str, str] = {}
    if exc.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if exc.retry_after is not None:
        headers["Retry-After"] = str(max(1, exc.retry_after))
    return JSONResponse(error_body(exc.body), exc.status, headers=headers)


def unavailable_handler(retry_after_s: int) -> Callable[[Request, Exception], Awaitable[Response]]:
    """Redis or a table actor out of reach: our trouble, told as `503 unavailable` with
    `Retry-After` rather than a plain-text 500 (the live games go on meanwhile)."""

    async def handler(request: Request, exc: Exception) -> Response:
        log.warning("%s %s: unavailable (%r)", request.method, request.url.path, exc)
        error = ApiError(
            ErrorCode.UNAVAILABLE, "a backend is out of reach, retry", 503, retry_after_s
        )
        return await api_error_handler(request, error)

    return handler


def no_room_handler(retry_after_s: int) -> Callable[[Request, Exception], Awaitable[Response]]:
    """Every table slot is taken: a new table is refused at once (`503 no_room`) rather than
    queued in Ray, where it would wait ahead of a crashed table's restart (actors.slots)."""

    async def handler(request: Request, exc: Exception) -> Response:
        log.warning("%s %s: no room for a new table", request.method, request.url.path)
        metrics.ERRORS.labels("no_room").inc()
        error = ApiError(ErrorCode.NO_ROOM, "every table is in use, retry soon", 503, retry_after_s)
        return await api_error_handler(request, error)

    return handler


async def validation_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    where = "; ".join(
        f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
    )
    return JSONResponse(
        error_body(ErrorBody(ErrorCode.BAD_MESSAGE, where or "malformed request")), 422
    )


async def http_error_handler(request: Request, exc: Exception) -> Response:
    """FastAPI's and Starlette's own refusals. A body that cannot be read (not UTF-8: FastAPI
    says 400) is malformed like any other, `422 bad_message`; a method a path does not take is
    405 with `Allow` naming every method of that path (Starlette names those of the first route
    whose path matched, so `OPTIONS /api/tables/{code}/seats/0` said POST, not POST and DELETE)."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400:
        error = ErrorBody(ErrorCode.BAD_MESSAGE, "the body could not be read as JSON in UTF-8")
        return JSONResponse(error_body(error), 422)
    if exc.status_code == 405:
        scope = dict(request.scope)
        allowed = {
            method
            for route in request.app.router.routes
            if route.matches(scope)[0] is not Match.NONE
            for method in getattr(route, "methods", None) or ()
        }
        exc = HTTPException(
            405, exc.detail, {**(exc.headers or {}), "Allow": ", ".join(sorted(allowed))}
        )
    return await http_exception_handler(request, exc)


def error_frame(frame_id: str | None, error: ErrorBody) -> dict[str, Any]:
    """The `error` frame that answers frame `frame_id` with a refusal."""
    return {"type": "error", "id": frame_id, **error.to_wire()}
