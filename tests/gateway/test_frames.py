"""The gateway's frame models (validation at the edge, and the schemas they publish) describe
the same commands as `engine/wire.py`, the one list of kinds and fields: a kind or a field added
to one and not the other fails here, not in play."""

from __future__ import annotations

from engine.wire import SOCKET_KINDS, fields_of
from gateway.frame_models import COMMAND_FRAMES, Frame

ENVELOPE = set(Frame.model_fields)  # type, id, expires: every frame's, no command's


def test_the_command_frames_are_the_engines_socket_kinds() -> None:
    assert set(COMMAND_FRAMES) == SOCKET_KINDS


def test_each_frame_has_its_commands_fields() -> None:
    for kind, model in COMMAND_FRAMES.items():
        assert set(model.model_fields) - ENVELOPE == fields_of(kind), kind
