"""Wire models: every REST body and every WebSocket frame, validated at the edge. Strict types:
`"slot": "1"` is malformed, not slot 1."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator

from engine.cards import PLAYER_COUNTS
from gateway.names import check_name

FrameId = Annotated[StrictStr, Field(max_length=64)]
CardId = Annotated[StrictStr, Field(max_length=8)]
Emoji = Annotated[StrictStr, Field(max_length=8)]


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


# -- REST ---------------------------------------------------------------------------------------
class NewSession(Body):
    name: StrictStr = Field(description="1–24 visible characters, not a bot's name")

    @field_validator("name")
    @classmethod
    def visible(cls, v: str) -> str:
        return check_name(v)


class SessionOut(BaseModel):
    token: str
    player_id: str
    name: str


class MyTable(BaseModel):
    code: str
    seat: int
    players: int
    phase: Literal["lobby", "signing", "playing", "pause", "over"]


class MyTables(BaseModel):
    tables: list[MyTable]


class Deal(Body):
    hands: list[list[StrictStr]]
    center: list[StrictStr]


class Scenario(Body):
    """Test hooks only (QUATRO_TEST_HOOKS=1): rig a table's deals and speed up its clock."""

    seed: StrictInt = 0
    time_scale: float = Field(1.0, gt=0, le=10)
    deals: list[Deal] = Field(default_factory=list, max_length=64)
    bot_policy: Literal["smart", "random", "idle"] | None = Field(
        default=None, description="extension: how bots play at this table (idle: not at all)"
    )


class NewTable(Body):
    players: Literal[4, 6, 8]
    scenario: Scenario | None = None


class TableOut(BaseModel):
    table_id: str
    code: str
    players: int
    host: int = 0


class QuickIn(Body):
    players: StrictInt = Field(
        description="the table size wanted: 4, 6 or 8 seats",
        json_schema_extra={"enum": list(PLAYER_COUNTS)},
    )

    @field_validator("players")
    @classmethod
    def size(cls, v: int) -> int:
        if v not in PLAYER_COUNTS:
            raise ValueError(f"a table has 4, 6 or 8 seats, not {v}")
        return v


class QuickOut(BaseModel):
    """(ext) Quick play: the public table and the seat the caller got."""

    code: str
    table_id: str
    seat: int
    players: int


class SeatOut(BaseModel):
    seat: int
    team: int


class BotIn(Body):
    seat: StrictInt


class BotsFilled(BaseModel):
    """The seats that the host's call filled with bots, in seat order (none when no seat was
    empty)."""

    seats: list[int] = Field(description="the seats that each got a bot from this call")


BotLevel = Literal["relaxed", "normal", "sharp"]
LateJoin = Literal["ask", "always", "never"]


class SettingsIn(Body):
    """Extension: the host's table settings; a field left out keeps its value."""

    bot_level: BotLevel | None = Field(
        default=None, description="how hard the bots play: relaxed, normal (default) or sharp"
    )
    hints: StrictBool | None = Field(
        default=None, description="whether players are shown hints (default true)"
    )
    watchers: StrictBool | None = Field(
        default=None,
        description="whether people without a seat may watch (default true); any time",
    )
    late_join: LateJoin | None = Field(
        default=None,
        description="whether a late arrival may take a bot's seat during the match: the host "
        "answers each request (ask, default), every request is granted (always), or none (never)",
    )


class ClaimAnswer(Body):
    """Extension (joining late): the host grants or refuses a request for a bot's seat."""

    accept: StrictBool


class ClaimOut(BaseModel):
    seat: int
    team: int
    approved: bool


class ClaimRow(BaseModel):
    seat: int
    name: str
    approved: bool


class Settings(BaseModel):
    bot_level: BotLevel = "normal"
    hints: bool = True
    watchers: bool = True
    late_join: LateJoin = "ask"


class Ok(BaseModel):
    ok: bool = True


class SeatRow(BaseModel):
    seat: int
    team: int
    name: str | None
    kind: Literal["human", "bot"] | None
    connected: bool


class TableSummary(BaseModel):
    code: str
    players: int
    phase: Literal["lobby", "signing", "playing", "pause", "over"]
    round: int
    host: int | None  # (ext) None at a public (quick-play) table, which nobody hosts
    scores: list[int]
    seats: list[SeatRow]
    # A table actor older than settings (a rolling upgrade) sends none: the defaults.
    settings: Settings = Field(default_factory=Settings)
    watching: int = 0  # (ext) connections watching without a seat, on every gateway
    public: bool = False  # (ext) a quick-play table
    fills_at: int | None = None  # (ext) when bots fill a public lobby's empty seats (ms)
    claims: list[ClaimRow] = Field(default_factory=list)  # (ext) requests for bots' seats


class Emojis(BaseModel):
    emojis: list[str]


class ClientConfig(BaseModel):
    test_hooks: bool


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


class MatchSpan(BaseModel):
    first: int  # index in `events` of the match's first event
    last: int  # index of its `over`


class ReplayOut(BaseModel):
    """(ext) A finished table's events, for one audience (docs/protocol.md, Replays)."""

    table_id: str
    code: str
    players: int
    view: Literal["public", "own"]
    seat: int | None  # the own view's seat; null for the public view
    start: dict[str, Any]  # the public snapshot of the empty table, before its first event
    matches: list[MatchSpan]
    events: list[dict[str, Any]]
