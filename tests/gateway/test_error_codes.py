"""Every error code of the wire is one member of `ErrorCode`: each has its HTTP status, is
written in docs/protocol.md, and the gateway's tables of codes name no other; and a refusal is
one `ErrorBody` in every layer."""

from __future__ import annotations

from pathlib import Path

from engine.errors import ErrorBody, ErrorCode, Refusal, VoteRefusal
from gateway import errors

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def test_every_code_has_a_status() -> None:
    missing = [code.value for code in ErrorCode if code not in errors.STATUS]
    assert missing == []


def test_the_gateway_names_no_code_outside_the_enum() -> None:
    known = {code.value for code in ErrorCode}
    assert set(errors.STATUS) <= known
    assert set(errors._CLOSE_FOR) <= known


def test_every_code_is_in_the_protocol_docs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert [code.value for code in ErrorCode if f"`{code.value}`" not in text] == []


def test_a_code_of_a_later_version_passes_through_as_a_409() -> None:
    body = ErrorBody.from_wire({"code": "some_later_code", "message": "m"})
    error = errors.ApiError.from_body(body)
    assert (error.code, error.status) == ("some_later_code", 409)
    assert errors.ApiError(ErrorCode.NO_ROOM, "m").status == 503


def test_one_refusal_type_crosses_every_layer() -> None:
    """The engine's refusal, the table's answer, the REST body and the socket's frame are one
    `ErrorBody` said four ways, with nothing lost on the way (a cooldown's `retry_in`, a
    refused vote's `reason`)."""
    refusal = Refusal(ErrorCode.VOTE_REFUSED, "no", retry_in=1500, reason=VoteRefusal.TOO_SOON)
    body = refusal.body
    assert ErrorBody.from_wire(body.to_wire()) == body
    assert errors.error_frame("f1", body) == {
        "type": "error",
        "id": "f1",
        "code": "vote_refused",
        "message": "no",
        "retry_in": 1500,
        "reason": "too_soon",
    }
    api = errors.ApiError.from_body(body)
    assert (api.status, errors.error_body(api.body)) == (
        409,
        {"error": {"code": "vote_refused", "message": "no"}},
    )
