"""Wire models of REST: every body and answer, validated at the edge (the WebSocket frames are
gateway/frame_models.py). Strict types: `"slot": "1"` is malformed, not slot 1."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
)

from engine.cards import PLAYER_COUNTS, RANKS
from gateway.names import MAX_CODE_POINTS, NAME_FORMAT, NAME_PATTERN, check_name

# The highest seat number of the largest table: a seat past the table's own last one is the
# table's to refuse (`422 bad_seat`), since only it knows its size.
MAX_SEAT = max(PLAYER_COUNTS) - 1
SEAT_SCHEMA: dict[str, Any] = {"minimum": 0, "maximum": MAX_SEAT}
# A table's code: 6 of actors.directory's CODE_ALPHABET (no 0/O, 1/I/L), read in either case.
CODE_PATTERN = "^[2-9A-HJKMNP-Za-hjkmnp-z]{6}$"


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _whole(value: object) -> object:
    """3.0 is 3: JSON and its schemas know one kind of number, so an integer written with a
    zero fraction is that integer (a string or `true` still is not one)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An integer of a REST body, as JSON Schema's `integer` is.
WholeInt = Annotated[StrictInt, BeforeValidator(_whole)]


# -- Refusals (every REST error answer) ------------------------------------------------------------
class ErrorDetail(BaseModel):
    code: str = Field(
        description="what was refused, one of the codes the operation lists for this status "
        "(a table of a later version may pass a code of its own through, as a 409)"
    )
    message: str = Field(description="for people: the reason, in English")


class ErrorOut(BaseModel):
    """Every refusal over REST: `{"error": {"code", "message"}}` (docs/protocol.md, Errors)."""

    error: ErrorDetail


# -- REST ---------------------------------------------------------------------------------------
class NewSession(Body):
    # The pattern and lengths are what a regular expression can say of the rule (control and
    # invisible characters refused anywhere, something to see); the rest (24 visible
    # characters, combining marks, a bot's name) is the format's, checked by gateway/names.py.
    name: StrictStr = Field(
        min_length=1,
        max_length=MAX_CODE_POINTS,
        description="1–24 visible characters once whitespace is collapsed, not a bot's name "
        "(docs/protocol.md, Identity); at most 64 code points as sent",
        json_schema_extra={"pattern": NAME_PATTERN, "format": NAME_FORMAT},
    )

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


# A rigged deal's shape in the schema; the engine checks it against the table's size and R2-R4
# (`422 bad_scenario`), so it is declared here and judged there.
_HAND: dict[str, Any] = {
    "type": "array",
    "minItems": 4,
    "maxItems": 4,
    "items": {"type": "string", "enum": list(RANKS)},
}


class Deal(Body):
    hands: list[list[StrictStr]] = Field(
        description="one hand of 4 ranks per seat",
        json_schema_extra={
            "minItems": min(PLAYER_COUNTS),
            "maxItems": max(PLAYER_COUNTS),
            "items": _HAND,
        },
    )
    center: list[StrictStr] = Field(description="the centre's 4 ranks", json_schema_extra=_HAND)


class Scenario(Body):
    """Test hooks only (QUATRO_TEST_HOOKS=1): rig a table's deals and speed up its clock."""

    seed: WholeInt = 0
    time_scale: float = Field(1.0, gt=0, le=10)
    deals: list[Deal] = Field(default_factory=list, max_length=64)
    bot_policy: Literal["smart", "random", "idle"] | None = Field(
        default=None, description="extension: how bots play at this table (idle: not at all)"
    )


BotLevel = Literal["relaxed", "normal", "sharp"]
LateJoin = Literal["ask", "always", "never"]


class NewTable(Body):
    players: Literal[4, 6, 8]
    scenario: Scenario | None = None
    practice: StrictBool = Field(
        default=False,
        description="extension: a practice table, whose matches change nobody's rating",
    )
    bot_level: BotLevel | None = Field(
        default=None,
        description="extension: the level the table's bots start at (the host may change it "
        "in the lobby). Left out: relaxed while the creator has won fewer than 3 finished "
        "matches (not at practice tables), normal after that",
    )


class TutorialScenario(Body):
    """Test hooks only (QUATRO_TEST_HOOKS=1): a tutorial's seed and clock; its deals are its
    script's (engine/tutorial.py), never the caller's."""

    seed: WholeInt = 0
    time_scale: float = Field(1.0, gt=0, le=10)


class NewTutorial(Body):
    """(ext) The guided practice round: nothing to choose (4 seats, the script's deals and
    bots); `scenario` only with the test hooks."""

    scenario: TutorialScenario | None = None


class TableOut(BaseModel):
    table_id: str
    code: str
    players: int
    host: int = 0


class QuickIn(Body):
    players: WholeInt = Field(
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
    seat: WholeInt = Field(
        description="0 to players-1 (422 bad_seat past the table's last seat)",
        json_schema_extra=SEAT_SCHEMA,
    )


class BotsFilled(BaseModel):
    """The seats that the host's call filled with bots, in seat order (none when no seat was
    empty)."""

    seats: list[int] = Field(description="the seats that each got a bot from this call")


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


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    """`ok` or `down: <why>` for each check; `ready` when all three are ok."""

    ready: bool
    redis: str
    ray: str
    tables: str


# -- A replay's seat line, also a profile's history's (gateway/profile_models.py) -------------
class SeatLine(BaseModel):
    seat: int
    team: int
    name: str = Field(description='the name at the table; "deleted player" once deleted')
    profile: str | None = Field(description="the player's profile, when its owner shows one")


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
    lineups: list[list[SeatLine] | None] = Field(
        default_factory=list,
        description="extension (issue 36): each finished match's players, as its record keeps "
        "them, each seat linked to its player's profile when that profile shows something (a "
        'deleted player: "deleted player", no link); null for a match that left no record',
    )
