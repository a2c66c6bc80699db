"""Wire models of profiles, leaderboards and passkeys (issue 36): REST bodies validated at the
edge, answers as the OpenAPI documents them. The rest of the wire: gateway/models.py (REST)
and gateway/frame_models.py (/ws)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, field_validator

from gateway.models import Body, SeatLine
from gateway.names import (
    LABEL_CODE_POINTS,
    LABEL_FORMAT,
    MAX_CODE_POINTS,
    NAME_FORMAT,
    NAME_PATTERN,
    check_label,
    check_name,
)

PROVISIONAL = (
    "whether the rating is still provisional: fewer than 10 rated matches at this size "
    '(shown as "1032?"); a provisional player is not listed on the leaderboard'
)
REMAINING = "rated matches still to play at this size before the player is listed (0: listed)"


class Standing(BaseModel):
    rating: int = Field(description="the displayed rating: 1000 + 40 × (μ − 3σ)")
    played: int = Field(description="rated matches at this size")
    won: int
    rank: int | None = Field(
        description="1 for the best on this size's leaderboard; null while not listed"
    )
    provisional: bool = Field(description=PROVISIONAL)
    remaining: int = Field(description=REMAINING)


class Standings(BaseModel):
    """A player's standing at each table size (null: no rated match at that size yet)."""

    four: Standing | None = Field(alias="4")
    six: Standing | None = Field(alias="6")
    eight: Standing | None = Field(alias="8")

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class HistoryLine(BaseModel):
    match: str
    table_id: str = Field(description="the replay: GET /api/replays/{table_id}")
    players: int
    ended_at: int
    scores: list[int]
    winners: list[int]
    team: int | None
    won: bool
    delta: int | None = Field(description="this player's rating change, if it was rated")
    rated: bool = Field(
        description="whether the match changed ratings: only when two teams each had a "
        "person who played it from its first round, never at a practice table"
    )
    reason: Literal["practice", "bots", "same_person", "repeated", "profile"] | None = Field(
        description="why it was not rated: a practice table, bots alone against the people "
        "(fewer than two teams with a person), two of its people seen at one address, the "
        "same two opponents past five counted matches within 24 hours, a player without a "
        "profile; null when rated, and for a match recorded before these reasons were kept"
    )
    weight: float | None = Field(
        description="the share of a whole match it counted for: 1, or 1/k as the k-th counted "
        "match of the same two opponents within 24 hours; null when not rated, and for a "
        "match recorded before weights were kept"
    )
    provisional: bool = Field(
        description="whether this player's rating was still provisional after this match"
    )
    seats: list[SeatLine]


class PasskeyOut(BaseModel):
    id: str = Field(description="the passkey's id here (never its credential id)")
    label: str = Field(description="what its owner calls the device; only they see it")
    created: int


class ProfileOut(BaseModel):
    """What anyone may see of a profile: what its owner shows."""

    player_id: str
    name: str | None = Field(description="null while hidden after reports")
    ratings: Standings | None = Field(description="null unless its owner shows ratings")
    history: list[HistoryLine] | None = Field(description="null unless its owner shows it")


class PublicChoice(BaseModel):
    ratings: bool
    history: bool


class MyProfile(BaseModel):
    """The owner's own profile: everything of it."""

    player_id: str
    name: str
    created: int
    public: PublicChoice
    name_hidden: bool = Field(description="hidden from others after reports: rename to show it")
    wins: int = Field(
        description="finished matches won, rated or not, never at a practice table, counted "
        "up to 3: while under 3, the tables this player opens start their bots at relaxed"
    )
    ratings: Standings
    history: list[HistoryLine]
    passkeys: list[PasskeyOut]
    lasting: bool = Field(
        description="kept for good; false: a guest's profile, deleted with everything it holds "
        "when its last session expires (7 days after it was last used), until a rated match, a "
        'passkey or `{"keep": true}` keeps it'
    )
    expires: int | None = Field(
        description="when a guest's profile goes unless a session of it is used again (ms); "
        "null for a lasting one"
    )


class ProfileChange(Body):
    name: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_CODE_POINTS,
        description="a new name, under the same rule as a session's",
        json_schema_extra={"pattern": NAME_PATTERN, "format": NAME_FORMAT},
    )
    ratings: StrictBool | None = Field(
        default=None, description="show the name, ratings and matches played and won"
    )
    history: StrictBool | None = Field(default=None, description="show the last matches")
    keep: Literal[True] | None = Field(
        default=None,
        description="keep a guest's profile for good (it no longer expires with its "
        "sessions); only `true`: a kept profile is deleted, never made a guest's again",
    )

    @field_validator("name")
    @classmethod
    def visible(cls, v: str | None) -> str | None:
        return None if v is None else check_name(v)


class BoardRow(BaseModel):
    rank: int | None = Field(
        description="null only in the caller's own row while they are not listed yet"
    )
    rating: int
    played: int
    won: int
    provisional: bool = Field(description=PROVISIONAL)
    remaining: int = Field(description=REMAINING)
    name: str | None = Field(description="null for a player who does not show their ratings")
    profile: str | None
    me: bool


class BoardOut(BaseModel):
    players: int
    page: int
    pages: int
    total: int
    rows: list[BoardRow]
    me: BoardRow | None = Field(description="the caller's own row, with a session")


class PasskeyOptions(BaseModel):
    challenge_id: str
    options: dict[str, Any] = Field(
        description="WebAuthn's PublicKeyCredentialCreationOptions or RequestOptions, in JSON "
        "(binary fields in base64url), for navigator.credentials.create()/get()"
    )


# A passkey's label: the characters a name may hold (the pattern says what a regular expression
# can of them; the format `quatro-label` is the whole rule, gateway/names.py), 1-40 of them.
LABEL_RULE: dict[str, Any] = {"pattern": NAME_PATTERN, "format": LABEL_FORMAT}
LABEL_SAYS = "1–40 visible characters once whitespace is collapsed, none of those a name refuses"


class PasskeyNew(Body):
    challenge_id: StrictStr = Field(max_length=64)
    credential: dict[str, Any] = Field(
        description="the browser's PublicKeyCredential, in JSON (base64url)"
    )
    label: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=LABEL_CODE_POINTS,
        description=f"what the owner calls the device: {LABEL_SAYS}; numbered when another of "
        "their passkeys reads alike (none: `Passkey`)",
        json_schema_extra=LABEL_RULE,
    )

    @field_validator("label")
    @classmethod
    def visible(cls, v: str | None) -> str | None:
        return None if v is None else check_label(v)


class PasskeyRename(Body):
    label: StrictStr = Field(
        min_length=1,
        max_length=LABEL_CODE_POINTS,
        description=f"the passkey's new label: {LABEL_SAYS}",
        json_schema_extra=LABEL_RULE,
    )

    @field_validator("label")
    @classmethod
    def visible(cls, v: str) -> str:
        return check_label(v)


class PasskeySignIn(Body):
    challenge_id: StrictStr = Field(max_length=64)
    credential: dict[str, Any]
