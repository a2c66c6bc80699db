"""Every error code of the wire is one member of `ErrorCode`: each has its HTTP status, is
written in docs/protocol.md, and the gateway's tables of codes name no other."""

from __future__ import annotations

from pathlib import Path

from engine.errors import ErrorCode
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
    error = errors.ApiError.from_wire({"code": "some_later_code", "message": "m"})
    assert (error.code, error.status) == ("some_later_code", 409)
    assert errors.ApiError(ErrorCode.NO_ROOM, "m").status == 503
