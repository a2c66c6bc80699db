"""What the OpenAPI says beyond what FastAPI reads from the routes' signatures: each refusal an
operation can answer (its status, the one error model, its codes as named examples, and
`Retry-After` or `WWW-Authenticate`), declared on the route with `refusals(...)`; and what the
middleware answers on every operation (400 for a `Host` not served, 413 for a body too large,
422 `bad_message` for a malformed request), added by `openapi(app)`.

tests/gateway/test_openapi.py checks each route's codes against the code it runs;
tests/cluster/test_openapi_fuzz.py fuzzes a live gateway with the result."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from engine.errors import ErrorCode
from gateway.errors import STATUS
from gateway.models import ErrorOut

# What each code means over REST, as the operations' docs say it (docs/protocol.md has the
# long form).
MEANING: dict[str, str] = {
    ErrorCode.BAD_MESSAGE: "the request is malformed: not JSON, a field missing, of the wrong "
    "type or out of its bounds (the message says where)",
    ErrorCode.BAD_SEAT: "no such seat at this table (seats are numbered 0 to players-1)",
    ErrorCode.BAD_SCENARIO: "a rigged deal breaks R2-R4 for this table's size",
    ErrorCode.BAD_TOKEN: "no session: send `Authorization: Bearer <token>` from POST "
    "/api/sessions (an unknown or expired token too)",
    ErrorCode.FORBIDDEN: "a `scenario` needs the server's test hooks (QUATRO_TEST_HOOKS=1)",
    ErrorCode.NOT_HOST: "only the table's host may do this",
    ErrorCode.NOT_ALLOWED: "not at this table: the host keeps seat 0, a public table has no "
    "host, its host lets nobody join late, or it is no tutorial of yours",
    ErrorCode.NO_SEAT: "you hold no seat at this table",
    ErrorCode.WATCHING_OFF: "the host closed this table to watchers",
    ErrorCode.UNKNOWN_TABLE: "no table has this code (or it has stopped)",
    ErrorCode.TABLE_LOST: "the table was lost: its saved state could not be read back",
    ErrorCode.SEAT_EMPTY: "nobody sits in that seat",
    ErrorCode.UNKNOWN_REPLAY: "no replay of that table: no such table, or its replay expired",
    ErrorCode.NO_CLAIM: "no such request for a seat",
    ErrorCode.NOT_FOUND: "this gateway was built without the web client",
    ErrorCode.SEAT_TAKEN: "that seat is taken (or someone asked for it first)",
    ErrorCode.ALREADY_SEATED: "you already hold a seat at this table",
    ErrorCode.TABLE_NOT_FULL: "every seat must be taken before the match starts",
    ErrorCode.NOT_A_BOT: "no bot sits in that seat",
    ErrorCode.ALREADY_CLAIMED: "you already asked for a seat at this table",
    ErrorCode.NOT_WATCHING: "watch the table as a claimant to ask for a seat: it comes there",
    ErrorCode.WRONG_PHASE: "not in the table's present phase (lobby, match or over)",
    ErrorCode.NOT_FINISHED: "no match of this table has ended yet",
    ErrorCode.INTERNAL: "the table refused without saying why (a bug, logged)",
    ErrorCode.TOO_LARGE: "the request's body is over the gateway's limit (16 KiB by default)",
    ErrorCode.RATE_LIMITED: "too many requests of this kind from your address: retry after "
    "`Retry-After` seconds",
    ErrorCode.TOO_MANY_LOBBIES: "you already have the most tables waiting in their lobby: "
    "start or leave one",
    ErrorCode.UNAVAILABLE: "Redis or the table is out of reach, or did not answer in time: "
    "retry after `Retry-After` seconds",
    ErrorCode.NO_ROOM: "every table slot of the cluster is taken: retry after `Retry-After` "
    "seconds",
    ErrorCode.UNKNOWN_PROFILE: "no such profile, or its owner shows nothing of it",
    ErrorCode.UNKNOWN_PASSKEY: "no such passkey of yours",
    ErrorCode.BAD_PASSKEY: "the passkey could not be verified: its challenge expired or was "
    "used, the origin or the signature is wrong, no profile has this passkey, or the site was "
    "opened by an IP address (a passkey's site is a domain name)",
}

RETRY_AFTER = {
    "Retry-After": {
        "description": "seconds to wait before asking again",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    }
}
WWW_AUTHENTICATE = {
    "WWW-Authenticate": {
        "description": "how to authenticate: `Bearer`",
        "required": True,
        "schema": {"type": "string", "enum": ["Bearer"]},
    }
}

# Groups of codes most operations share.
AUTH = (ErrorCode.BAD_TOKEN,)
BACKEND = (ErrorCode.UNAVAILABLE,)  # Redis (sessions, quotas) or a table out of reach
QUOTA = (ErrorCode.RATE_LIMITED,)


def refusals(*codes: str | tuple[str, int]) -> dict[int | str, dict[str, Any]]:
    """The `responses` of a route that can refuse with `codes`, each at its status in
    `gateway.errors.STATUS` or the one given with it."""
    by_status: dict[int, list[str]] = {}
    for item in codes:
        code, status = item if isinstance(item, tuple) else (item, STATUS[item])
        if code not in by_status.setdefault(status, []):
            by_status[status].append(code)
    return {status: _refusal(status, by_status[status]) for status in sorted(by_status)}


def _refusal(status: int, codes: list[str]) -> dict[str, Any]:
    response: dict[str, Any] = {
        "model": ErrorOut,
        "description": "; ".join(f"`{code}`: {MEANING[code]}" for code in codes),
        "content": {"application/json": {"examples": _examples(codes)}},
    }
    if status in (429, 503):
        response["headers"] = RETRY_AFTER
    elif status == 401:
        response["headers"] = WWW_AUTHENTICATE
    return response


def _examples(codes: list[str]) -> dict[str, Any]:
    return {
        str(code): {
            "summary": MEANING[code],
            "value": {"error": {"code": str(code), "message": MEANING[code]}},
        }
        for code in codes
    }


# -- What every operation can answer ------------------------------------------------------------
# Starlette's TrustedHostMiddleware answers in plain text, before any route (gateway.trusted_host).
BAD_HOST = {
    "description": "the `Host` header names no host this gateway serves (QUATRO_TRUSTED_HOSTS)",
    "content": {"text/plain": {"schema": {"type": "string"}}},
}
PROBES = ("/healthz", "/readyz")  # answer any host
ERROR_REF = {"$ref": "#/components/schemas/ErrorOut"}
METHODS = ("get", "put", "post", "delete", "patch")


def openapi(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI, built once: FastAPI's, with what every operation can answer."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            description=app.description,
            routes=app.routes,
        )
        for path, item in schema["paths"].items():
            for method, operation in item.items():
                if method in METHODS:
                    _every_answer(path, operation)
        schemas = schema["components"]["schemas"]
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        app.openapi_schema = schema
    return app.openapi_schema


def _every_answer(path: str, operation: dict[str, Any]) -> None:
    responses = operation["responses"]
    for response in responses.values():
        content = response.get("content") or {}
        if any(media.get("schema") == ERROR_REF for media in content.values()):
            # A refusal is JSON, whatever the route's own media type (an HTML page's 404:
            # FastAPI put its schema under text/html, beside the JSON examples). A media type
            # with a schema of its own stays: a page's address of the wrong shape is answered
            # with the page (routes/pages.py, NO_PAGE).
            error = {
                name
                for name, media in content.items()
                if media.get("schema", ERROR_REF) == ERROR_REF
            }
            merged: dict[str, Any] = {}
            for media in sorted(error, key=lambda name: name == "application/json"):
                merged |= content[media]
            others = {name: media for name, media in content.items() if name not in error}
            response["content"] = {"application/json": merged, **others}
    if path not in PROBES:
        responses.setdefault("400", BAD_HOST)
    # BodyLimit reads Content-Length on every request, whatever the method.
    _merge(responses, 413, [ErrorCode.TOO_LARGE])
    if _validates(operation):
        _merge(responses, 422, [ErrorCode.BAD_MESSAGE])
    elif "ErrorOut" not in str(responses.get("422", "ErrorOut")):
        del responses["422"]  # FastAPI's own, for a route where nothing can fail validation


def _validates(operation: dict[str, Any]) -> bool:
    """Whether FastAPI can refuse the request as malformed: a body, or a parameter that is not
    any string (an integer, a choice)."""
    return "requestBody" in operation or any(
        param["schema"].get("type") != "string" or "enum" in param["schema"]
        for param in operation.get("parameters", [])
    )


def _merge(responses: dict[str, Any], status: int, codes: list[str]) -> None:
    """Add `codes` to the documented refusal at `status` (or document it)."""
    known = responses.get(str(status))
    media = ((known or {}).get("content") or {}).get("application/json") or {}
    if media.get("schema") != ERROR_REF:  # none yet, or FastAPI's HTTPValidationError
        fresh = _refusal(status, codes)
        fresh["content"]["application/json"]["schema"] = ERROR_REF
        del fresh["model"]
        responses[str(status)] = fresh
        return
    examples = media.setdefault("examples", {})
    new = [code for code in codes if code not in examples]
    examples.update(_examples(new))
    if new and known is not None:
        known["description"] += "".join(f"; `{code}`: {MEANING[code]}" for code in new)
