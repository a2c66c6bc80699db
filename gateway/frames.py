"""Reading a client frame of `/ws`: its JSON, its model (gateway/frame_models.py), and the engine
command it asks for (engine.wire), each step refusing with a clear code and changing nothing."""

from __future__ import annotations

import json

from pydantic import ValidationError

from engine.commands import Command
from engine.errors import ErrorBody, ErrorCode, Refusal
from engine.wire import ASKER, command_from_frame
from gateway.frame_models import ALL_FRAMES, Frame


class BadFrame(Exception):
    """A frame that cannot be read (`bad_message`, `unknown_type`): its id, if any, and why."""

    def __init__(self, frame_id: str | None, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.frame_id = frame_id
        self.body = ErrorBody(code, message)


def parse(text: str) -> Frame:
    """A client frame, validated; BadFrame (`bad_message`, `unknown_type`) otherwise."""
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting thousands deep
        raise BadFrame(None, ErrorCode.BAD_MESSAGE, "a frame is one JSON object") from exc
    if not isinstance(raw, dict):
        raise BadFrame(None, ErrorCode.BAD_MESSAGE, "a frame is one JSON object")
    frame_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    kind = raw.get("type")
    if not isinstance(kind, str):
        raise BadFrame(frame_id, ErrorCode.BAD_MESSAGE, "a frame needs a string `type`")
    model = ALL_FRAMES.get(kind)
    if model is None:
        raise BadFrame(frame_id, ErrorCode.UNKNOWN_TYPE, f"unknown frame type {kind[:32]!r}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        where = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise BadFrame(frame_id, ErrorCode.BAD_MESSAGE, where) from exc


def command_of(frame: Frame) -> Command:
    """The engine command a command frame asks for, its seat left to the table (ASKER)."""
    fields = frame.model_dump(exclude={"type", "id", "expires"})
    try:
        return command_from_frame(frame.type, ASKER, fields)
    except Refusal as refusal:  # the models and engine.wire agree (tests/gateway/test_frames.py)
        raise BadFrame(frame.id, refusal.code, refusal.message) from refusal


def frame_id(text: str) -> str | None:
    """The `id` of a refused frame, read only from a small one: a flood is not parsed."""
    if len(text) > 256:
        return None
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        return None
    found = raw.get("id") if isinstance(raw, dict) else None
    return found if isinstance(found, str) else None
