"""Wire models of `/ws`: every client frame, validated at the edge, and the server's own frames
(the others are engine events). Strict types: `"slot": "1"` is malformed, not slot 1."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

FrameId = Annotated[StrictStr, Field(max_length=64)]
CardId = Annotated[StrictStr, Field(max_length=8)]
Emoji = Annotated[StrictStr, Field(max_length=8)]


# -- WebSocket client frames ----------------------------------------------------------------------
class Frame(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: str
    id: FrameId | None = None
    # Server time (ms since the epoch, as events' `at`) after which a command must not be
    # applied: a frame held in a dead link and delivered late is refused `expired` instead.
    expires: Annotated[StrictInt, Field(ge=0, lt=2**53)] | None = None


class Hello(Frame):
    type: Literal["hello"]
    token: Annotated[StrictStr, Field(max_length=256)]
    table: Annotated[StrictStr, Field(max_length=16)]
    # (ext) Watch the table without a seat: the public view and public events only.
    watch: StrictBool = False
    # (ext) With `watch`: a watcher who may ask for a bot's seat (joining late). The table then
    # knows this connection by itself, to hand it the seat; other watchers share their gateway's
    # view and cost the table nothing each.
    claimant: StrictBool = False


class ReadyFrame(Frame):
    type: Literal["ready"]


class SignFrame(Frame):
    type: Literal["sign"]
    emoji: Emoji


class SwapFrame(Frame):
    type: Literal["swap"]
    card: CardId
    slot: StrictInt
    expect: CardId


class FloorFrame(Frame):
    type: Literal["floor"]
    open: StrictBool


class EmitFrame(Frame):
    type: Literal["emit"]
    emoji: Emoji


class QuatroFrame(Frame):
    type: Literal["quatro"]


class ContreFrame(Frame):
    type: Literal["contre"]
    team: StrictInt | None = None


class VoteRequestFrame(Frame):
    type: Literal["vote_request"]


class VoteFrame(Frame):
    type: Literal["vote"]
    accept: StrictBool


class NextRoundFrame(Frame):
    type: Literal["next_round"]


class RematchFrame(Frame):
    type: Literal["rematch"]


class PingFrame(Frame):
    type: Literal["ping"]


# Frames that become table commands; their fields (less type and id) are the command's.
COMMAND_FRAMES: dict[str, type[Frame]] = {
    "ready": ReadyFrame,
    "sign": SignFrame,
    "swap": SwapFrame,
    "floor": FloorFrame,
    "emit": EmitFrame,
    "quatro": QuatroFrame,
    "contre": ContreFrame,
    "vote_request": VoteRequestFrame,
    "vote": VoteFrame,
    "next_round": NextRoundFrame,
    "rematch": RematchFrame,
}
ALL_FRAMES: dict[str, type[Frame]] = {**COMMAND_FRAMES, "ping": PingFrame, "hello": Hello}


# -- WebSocket server frames (documented; the gateway builds them from engine events) -----------
class Ack(BaseModel):
    type: Literal["ack"] = "ack"
    id: str | None


class Pong(BaseModel):
    type: Literal["pong"] = "pong"
    id: str | None


class ErrorFrame(BaseModel):
    type: Literal["error"] = "error"
    id: str | None
    code: str
    message: str
    retry_in: int | None = None
    reason: str | None = None
