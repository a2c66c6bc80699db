"""A table's finished matches on their way to the players' ratings (issue 36): exactly once.

Where: here, in the table actor, because the match ends here. The `over` event and the match's
result (`engine.Table.result`) enter the table's snapshot in the same change, so the save that
ends the match is also the durable record that its ratings are owed: an outbox in the snapshot.
After that save, a task settles each owed match (actors/ratings.py: one script on the table
size's slot, keyed by the match's id, that applies nothing twice; then actors/match_records.py:
the match's record, its people's history lines and wins, each step repeatable), tells the table
the rating changes or why there were none (a `ratings` event: a match against bots alone, a
practice table), and only then drops the match from the outbox, in one change. So:

- the actor dies before the save: there was no `over` either; the match ends again as it will;
- it dies after the save, before or during the settling: the restarted incarnation reads the
  outbox from its snapshot and settles again; the script finds what it already applied;
- a command retried by a gateway is answered from the table's memory of command ids, and
  never ends a match twice; Redis lost, failing over or slow: the task tries again, with
  backoff, for as long as the table lives (the outbox is saved with it);
- the store's primary lost before its replica had the update: where the store has replicas,
  the update waits for one (`WAIT`, as a scoring save does), and a match no replica confirmed
  stays owed and is sent again with the same backoff; a replica silent for 30 s is taken as
  gone, as the scoring save takes it, and the match settled on the primary's word (logged).

No rule reads any of this: the engine never hears of ratings (R30: a rating says nothing
about a live hand, and is told only once the match is over).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import redis

from actors.match_records import MatchRecords
from actors.protocol import Entry
from actors.ratings import RatingStore, Settled, match_id
from actors.tasks import Tasks
from engine import Table
from engine.ratings import MatchResult, SeatResult

log = logging.getLogger("quatro.table")

RETRY_FIRST_S = 0.5
RETRY_MOST_S = 30.0

R = TypeVar("R")


class NotSaved(RuntimeError):
    """The save that ended the match has not reached Redis yet."""


class Rated(Protocol):
    """What the results need of the table."""

    code: str
    table: Table | None
    tasks: Tasks
    version: int

    @property
    def table_id(self) -> str:
        """Its matches' ids start with it."""
        ...

    def saved_version(self) -> int: ...

    def now(self) -> int: ...

    def announce(self, wire: dict[str, Any], now: int) -> list[Entry]: ...

    async def change(
        self, step: Callable[[], R], *, touch: bool, save: Callable[[R], bool] | None = None
    ) -> R: ...


class Results:
    def __init__(self, core: Rated, store: Callable[[], RatingStore]) -> None:
        self.core = core
        self._make_store = store
        # Made on the actor's loop, at first use, then kept: it knows how long no replica has
        # confirmed the match it is settling.
        self._store: RatingStore | None = None
        self.owed: list[dict[str, Any]] = []  # the outbox: saved with the snapshot
        # The last settled match's changes as the table told them (`ratings`), for a view.
        self.last: dict[str, Any] | None = None
        self._owed_at = 0  # the version whose save holds the newest owed match
        self._task: asyncio.Task[None] | None = None

    # -- in a change's step --------------------------------------------------------------------
    def ended(self, version: int) -> None:
        """The match just ended (its `over` is being committed): its ratings are owed."""
        t = self.core.table
        result = None if t is None else t.result()
        if result is None:
            return
        self.owed.append(result_wire(result))
        self._owed_at = version
        self.last = None

    def restored(self, owed: list[dict[str, Any]], last: dict[str, Any] | None) -> None:
        self.owed, self.last = list(owed), last

    def to_snapshot(self) -> dict[str, Any]:
        return {"owed": list(self.owed), "last": self.last}

    # -- the settling --------------------------------------------------------------------------
    def kick(self) -> None:
        """Settle what is owed, in a task of the table's, unless one runs already."""
        if self.owed and (self._task is None or self._task.done()):
            self._task = self.core.tasks.spawn(self._settle_all(), "ratings")

    async def _settle_all(self) -> None:
        delay = RETRY_FIRST_S
        while self.owed:
            owed = self.owed[0]
            try:
                if self.core.saved_version() < self._owed_at:
                    # The match's end must be in Redis before anything of it is: never rate a
                    # match that a crash could still take back (the save is being retried).
                    raise NotSaved("the end of the match is not saved yet")
                changes = await self._settle(owed)
            except (redis.RedisError, OSError, TimeoutError, RuntimeError) as exc:
                log.warning(
                    "table %s: ratings of match %s not settled (%s); will retry",
                    self.core.table_id,
                    owed["match"],
                    exc,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MOST_S)
                continue
            delay = RETRY_FIRST_S
            await self.core.change(functools.partial(self._told, owed, changes), touch=False)

    async def _settle(self, owed: dict[str, Any]) -> Settled:
        result = result_from_wire(owed)
        mid = match_id(self.core.table_id, result.match)
        store = self.store()
        settled = await store.apply(mid, result, self.core.now())
        records = MatchRecords(store.redis)
        await records.record(mid, self.core.table_id, self.core.code, result, settled)
        return settled

    def store(self) -> RatingStore:
        if self._store is None:
            self._store = self._make_store()
        return self._store

    def _told(self, owed: dict[str, Any], settled: Settled) -> list[Entry]:
        """The match is settled: the table hears the changes, or why there are none, and the
        outbox forgets it, in one step (so one save holds both, or neither)."""
        if owed not in self.owed:
            return []
        self.owed.remove(owed)
        changes = settled.changes
        # Public, like the scores: each rated seat's change and whether the rating is still
        # provisional, not the rating itself (a profile shows that only if its owner chose to).
        wire = {
            "type": "ratings",
            "match": owed["match"],
            "rated": settled.rated,
            "reason": settled.reason,
            # Issue 47: what share of a whole match it counted for (1/k for the k-th match of
            # its opponents' day); null when not rated.
            "weight": settled.weight if settled.rated else None,
            "changes": [
                {
                    "seat": s["seat"],
                    "delta": changes[s["player_id"]]["after"] - changes[s["player_id"]]["before"],
                    "provisional": settled.provisional(s["player_id"]),
                }
                for s in owed["seats"]
                if s["player_id"] in changes
            ],
        }
        self.last = wire
        return self.core.announce(wire, self.core.now())


def result_wire(result: MatchResult) -> dict[str, Any]:
    return {**dataclasses.asdict(result), "seats": [dataclasses.asdict(s) for s in result.seats]}


def result_from_wire(raw: dict[str, Any]) -> MatchResult:
    return MatchResult(
        match=int(raw["match"]),
        players=int(raw["players"]),
        scores=tuple(int(x) for x in raw["scores"]),
        seats=tuple(
            SeatResult(int(s["seat"]), int(s["team"]), s["player_id"], str(s["name"]))
            for s in raw["seats"]
        ),
        bot_level=str(raw["bot_level"]),
        practice=bool(raw["practice"]),
        ended_at=int(raw["ended_at"]),
    )
