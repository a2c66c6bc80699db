"""Refusals: the one way the engine says no, carrying the protocol's error code.

A refused command changes nothing. `events` holds what the clock produced before the command
was judged (the table is advanced to the command's time first), so callers never lose them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.events import Outbound


class ErrorCode(StrEnum):
    """Every error code of the wire, in one place (docs/protocol.md lists them all): the engine
    raises those of the rules; the table actor and the gateway say the others, below, which
    are about tables, sessions and the cluster rather than a rule."""

    BAD_MESSAGE = "bad_message"
    UNKNOWN_TYPE = "unknown_type"
    WRONG_PHASE = "wrong_phase"
    NOT_YOUR_CARD = "not_your_card"
    BAD_SLOT = "bad_slot"
    COOLDOWN = "cooldown"
    STALE = "stale"
    FLOOR_COOLDOWN = "floor_cooldown"
    NO_FLOOR = "no_floor"
    BAD_EMOJI = "bad_emoji"
    SIGN_TAKEN = "sign_taken"
    BAD_TEAM = "bad_team"
    VOTE_REFUSED = "vote_refused"
    NOT_VOTER = "not_voter"
    NOT_HOST = "not_host"
    # Lobby (R29); the gateway maps these to HTTP statuses.
    BAD_SEAT = "bad_seat"
    SEAT_TAKEN = "seat_taken"
    ALREADY_SEATED = "already_seated"
    SEAT_EMPTY = "seat_empty"
    NOT_A_BOT = "not_a_bot"
    NOT_ALLOWED = "not_allowed"
    TABLE_NOT_FULL = "table_not_full"
    # Joining late (an extension of R29)
    ALREADY_CLAIMED = "already_claimed"
    NO_CLAIM = "no_claim"
    NOT_WATCHING = "not_watching"
    # The guided round (engine.coach): a move its lesson does not take now.
    TUTORIAL_STEP = "tutorial_step"
    # Said by the table actor: the table, not a rule.
    NO_SEAT = "no_seat"
    UNKNOWN_TABLE = "unknown_table"
    TABLE_LOST = "table_lost"
    EXPIRED = "expired"
    WATCHING_OFF = "watching_off"
    INTERNAL = "internal"
    # Said by the gateway: sessions, limits, the cluster.
    BAD_TOKEN = "bad_token"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    BAD_SCENARIO = "bad_scenario"
    UNKNOWN_REPLAY = "unknown_replay"
    NOT_FINISHED = "not_finished"
    TOO_LARGE = "too_large"
    RATE_LIMITED = "rate_limited"
    FLOODING = "flooding"
    TOO_MANY_LOBBIES = "too_many_lobbies"
    UNAVAILABLE = "unavailable"
    NO_ROOM = "no_room"
    # Profiles and passkeys (issue 36).
    UNKNOWN_PROFILE = "unknown_profile"
    UNKNOWN_PASSKEY = "unknown_passkey"
    BAD_PASSKEY = "bad_passkey"


class VoteRefusal(StrEnum):
    VOTE_RUNNING = "vote_running"
    ALREADY_RESHUFFLED = "already_reshuffled"
    TOO_SOON = "too_soon"


@dataclass(frozen=True, slots=True)
class ErrorBody:
    """A refusal as every layer passes it on, and as the player's `error` frame and a REST
    error's body say it: its code (an `ErrorCode`, or the code of a table of a later version,
    passed through), message, `retry_in` (ms, a cooldown) and `reason` (a vote refused). The
    exceptions that carry one: `Refusal` here, `ApiError` in the gateway."""

    code: str
    message: str
    retry_in: int | None = None
    reason: str | None = None

    def to_wire(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code, "message": self.message}
        if self.retry_in is not None:
            out["retry_in"] = self.retry_in
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_wire(cls, raw: Mapping[str, object]) -> ErrorBody:
        retry_in, reason = raw.get("retry_in"), raw.get("reason")
        return cls(
            str(raw["code"]),
            str(raw["message"]),
            None if retry_in is None else int(str(retry_in)),
            None if reason is None else str(reason),
        )


class Refusal(Exception):
    """A command the rules refuse. Nothing changed."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        retry_in: int | None = None,
        reason: VoteRefusal | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_in = retry_in
        self.reason = reason
        self.events: list[Outbound] = []

    @property
    def body(self) -> ErrorBody:
        reason = None if self.reason is None else str(self.reason)
        return ErrorBody(str(self.code), self.message, self.retry_in, reason)

    def to_wire(self) -> dict[str, object]:
        return self.body.to_wire()
