"""Putting right the ratings that matches against bots alone changed (issue 46): the release
before rated every match with a person in it, so a player who only ever played bots could top a
leaderboard. This release rates only matches of people on two teams (engine.ratings); the
ratings, leaderboards, applied entries and match records of each table size are made again by
that rule from the matches applied (actors/rating_replay.py says how, and what it assumes).

**When.** By itself: every gateway of this release checks each size when it starts, then every
10 minutes (`gateway/services.py`), and puts it right when it finds, in `rated`, an entry of the
rule before (without `rule`) whose record exists: at its first start on a store of the release
before, all of them; after that, those a table actor of the release before applied while the
workers rolled (gateways roll first), found among the entries applied since the last fix. Done,
it leaves a marker (`keys.rating_fix(n)`, field `done`: when its last pass began, what it did,
`complete`), and a check then reads only what was applied since. `python -m actors.rating_fix`
runs it by hand (`--again`: even when nothing is pending) and prints what it did.

**Once, whatever runs at once.** A fix holds a lease on its size (the same hash, field `lease`:
a holder and a deadline, renewed by each step): a gateway that finds another's lease live leaves
the size to it, and looks again at its next check. While it reads and writes the size's
ratings and entries, it also holds a freeze (field `freeze`), and this release's `APPLY`
refuses to rate a match of that size meanwhile (the table tries again with its backoff: a
`ratings` event late by that much); an actor of the release before does not know the freeze,
so each player's rating is written only if its version is still the one read, and a pass that
finds a version moved, or an entry of the rule before applied since it began, is run again (at
most `PASSES` times, then left to the next check). The records come last, applies free again:
they hold nothing a rating is computed from, and a marker with `complete` false says they are
still to do, should the fix stop before them. What it writes is absolute — a rating, an entry,
a record's fields as the replay makes them — and only where it differs from what is there: a
second run changes nothing, and two runs would write the same.

**Bounded steps, one slot each** (Redis Cluster): pages of `PAGE` ids of `rated-at` with their
entries (the size's slot), their records (a pipeline of single-key reads, each on its own
slot), the ratings and the board read by HSCAN and ZSCAN, then writes in scripts of `BATCH`
players or entries on the size's slot, and pages of record patches, one script per record on
its own slot (only the fields that say how it was rated, so that a deletion's scrub of the same
record is never undone). Between them it holds, for one size, a compact line per applied match
(30 days of them: `rated-at`) and a standing per rated player. `python -m
loadtests.rating_fix_scale` times it, and what the freeze costs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import time
from dataclasses import asdict, dataclass
from typing import Any

from actors import keys
from actors.rating_fix_scripts import ENTRIES, LEASE, MARK, PATCH, PATCHES, RECORDS, WRITE
from actors.rating_replay import Applied, Line, Replayed, patch_json, replay
from actors.ratings import Settled, Standing
from cluster.redis_client import AsyncRedis, async_redis
from engine.cards import PLAYER_COUNTS
from engine.ratings import provisional

log = logging.getLogger("quatro.ratings")

PAGE = 500  # ids, records or players read per step
BATCH = 100  # players or entries written per script
LEASE_MS = 60_000  # a fix that stops renewing its lease for this long has died
CHECK_S = 600.0  # how often a gateway looks for entries of the rule before
MARGIN_MS = 10 * 60_000  # tables' clocks against Redis's, when reading what was applied since
PASSES = 5  # passes before a size whose versions keep moving is left to the next check
SAME = 1e-9  # μ and σ this close are the same rating (Redis's Lua rounds to 14 digits)


@dataclass
class FixReport:
    """What a fix of one size did (its JSON is the marker's `done`)."""

    players: int = 0
    at: int = 0  # when its last pass began (Redis's clock, ms)
    matches: int = 0  # applied entries read
    unrated: int = 0  # of them, matches that no longer count
    kept: int = 0  # players whose history is not all known (actors/rating_replay.py)
    written: int = 0  # ratings rewritten or removed
    entries: int = 0  # applied entries rewritten
    records: int = 0  # records patched
    passes: int = 0
    ms: int = 0
    frozen_ms: int = 0  # how long this release's applies of the size waited for it
    ran: bool = False  # False: nothing was pending, or another gateway held the lease


class LeaseLost(RuntimeError):
    """Another holder took the size's lease: this fix stops, and leaves the size to it."""


class RatingFix:
    def __init__(self, redis: AsyncRedis, holder: str) -> None:
        self.redis = redis
        self.holder = holder

    async def check(self, players: int, again: bool = False) -> FixReport:
        """Put the size right if anything is pending (or, with `again`, in any case)."""
        report = FixReport(players)
        if not again and not await self.pending(players):
            return report
        started = time.monotonic()
        at = await self._lease(players, freeze=True)
        if not at:
            return report
        done = ""
        try:
            for n in range(1, PASSES + 1):
                report = FixReport(players, at, passes=n, ran=True)
                if await self._pass(players, report):
                    done = json.dumps(asdict(report) | {"ms": _ms(started), "complete": True})
                    break
                at = await self._lease(players, freeze=True)
            else:
                log.warning("ratings of %d seats: still moving after %d passes", players, PASSES)
        finally:
            await MARK.run(self.redis, [keys.rating_fix(players)], [self.holder, done, "1"])
        report.ms = _ms(started)
        log.info("ratings of %d seats put right: %s", players, done or asdict(report))
        return report

    async def pending(self, players: int) -> bool:
        """Whether the size was never put right, or its last fix stopped before its records
        were all patched, or an entry of the rule before with a record was applied since its
        last fix began."""
        raw = await self.redis.hget(keys.rating_fix(players), "done")
        if raw is None:
            return True
        done = json.loads(raw)
        if not done.get("complete"):
            return True
        since = int(done["at"]) - MARGIN_MS
        offset = 0
        while True:
            found = await self.redis.zrangebyscore(
                keys.rated_at(players), since, "+inf", start=offset, num=PAGE
            )
            ids = [str(m) for m in found]
            if not ids:
                return False
            entries = await self.redis.hmget(keys.rated(players), ids)
            old = [m for m, e in zip(ids, entries, strict=True) if _older(e)]
            if old and any(r is not None for r in await self._records(old)):
                return True
            offset += PAGE

    async def _lease(self, players: int, freeze: bool) -> int:
        names = [keys.rating_fix(players)]
        return int(await LEASE.run(self.redis, names, [self.holder, LEASE_MS, int(freeze)]))

    async def _pass(self, players: int, report: FixReport) -> bool:
        """Read, replay, write, the size's applies waiting; then, applies free again, the
        records. True when nothing moved meanwhile."""
        applied = await self._applied(players)
        standings, board = await self._standings(players)
        report.matches, report.players = len(applied), len(standings)
        done = replay(applied, standings)
        report.unrated, report.kept = done.unrated, len(done.kept)
        moved = await self._write_standings(players, done, standings, board, report)
        await self._write_entries(players, done, report)
        stale = moved > 0 or await self._applied_since(players, report.at, {a.mid for a in applied})
        thawed = await self._lease(players, freeze=False)
        if not thawed:
            raise LeaseLost(f"ratings of {players} seats: another fix took over")
        report.frozen_ms = thawed - report.at
        if stale:
            return False
        # Written: a fix that stops from here on leaves this mark, and the next check finishes
        # the records (they change nothing that a match's rating reads).
        marked = asdict(report) | {"complete": False}
        await MARK.run(
            self.redis, [keys.rating_fix(players)], [self.holder, json.dumps(marked), "0"]
        )
        await self._patch_records(players, done, report)
        return True

    async def _applied(self, players: int) -> list[Applied]:
        """Every applied entry, in the order applied, a page at a time. Paged by score, not by
        rank: an apply's trim of the oldest (an actor of the release before) would shift ranks
        under the reader and skip entries."""
        out: list[Applied] = []
        seen: set[str] = set()
        low: float | str = "-inf"
        while True:
            await self._renew(players)
            page: list[Any] = await self.redis.zrangebyscore(
                keys.rated_at(players), low, "+inf", start=0, num=PAGE, withscores=True
            )
            ids = [str(m) for m, _ in page if str(m) not in seen]
            if not ids:
                return out
            low = float(page[-1][1])
            seen.update(ids)
            entries = await self.redis.hmget(keys.rated(players), ids)
            records = await self._records(ids)
            for mid, entry, record in zip(ids, entries, records, strict=True):
                if entry is not None:
                    line = None if record is None else Line.of(json.loads(record))
                    out.append(Applied(mid, Settled.read(entry), line))

    async def _records(self, ids: list[str]) -> list[Any]:
        pipe = RECORDS.on(self.redis)
        for mid in ids:
            pipe.get(keys.match(mid))
        return await RECORDS.run(pipe)

    async def _standings(self, players: int) -> tuple[dict[str, Standing], dict[str, float]]:
        standings: dict[str, Standing] = {}
        async for pid, raw in self.redis.hscan_iter(keys.ratings(players), count=PAGE):
            standings[str(pid)] = Standing.read(raw)
        board: dict[str, float] = {}
        async for pid, score in self.redis.zscan_iter(keys.board(players), count=PAGE):
            board[str(pid)] = float(score)
        return standings, board

    async def _write_standings(
        self,
        players: int,
        done: Replayed,
        now: dict[str, Standing],
        board: dict[str, float],
        report: FixReport,
    ) -> int:
        args: list[str | int] = []
        for pid, new in done.standings.items():
            old = now[pid]
            listed = new is not None and not provisional(new.played)
            score = "" if new is None or not listed else new.rating.display
            on_board = board.get(pid)
            if _same(old, new) and on_board == (None if score == "" else float(score)):
                continue
            rating = "" if new is None else _json(new, old.version + 1)
            args += [pid, old.version, rating, score]
        moved = 0
        for i in range(0, len(args), 4 * BATCH):
            await self._renew(players)
            names = [
                keys.ratings(players),
                keys.board(players),
                keys.board_names(players),
                keys.unrated(players),
                keys.rating_fix(players),
            ]
            answer = int(
                await WRITE.run(self.redis, names, [self.holder, *args[i : i + 4 * BATCH]])
            )
            if answer < 0:
                raise LeaseLost(f"ratings of {players} seats: another fix took over")
            moved += answer
        report.written = len(args) // 4 - moved
        return moved

    async def _write_entries(self, players: int, done: Replayed, report: FixReport) -> None:
        pairs = [x for mid, entry in done.entries.items() for x in (mid, entry)]
        for i in range(0, len(pairs), 2 * BATCH):
            await self._renew(players)
            names = [keys.rated(players), keys.rating_fix(players)]
            batch = [self.holder, *pairs[i : i + 2 * BATCH]]
            if int(await ENTRIES.run(self.redis, names, batch)) < 0:
                raise LeaseLost(f"ratings of {players} seats: another fix took over")
        report.entries = len(done.entries)

    async def _patch_records(self, players: int, done: Replayed, report: FixReport) -> None:
        todo = list(done.patches.items())
        for i in range(0, len(todo), PAGE):
            await self._renew(players, freeze=False)
            pipe = PATCHES.on(self.redis)
            for mid, said in todo[i : i + PAGE]:
                PATCH.queue(pipe, [keys.match(mid)], [patch_json(said)])
            report.records += sum(int(x) for x in await PATCHES.run(pipe))

    async def _applied_since(self, players: int, at: int, seen: set[str]) -> bool:
        """Whether an entry of the rule before was applied since the pass began that it did not
        read (a table actor of the release before, its worker not replaced yet)."""
        ids = await self.redis.zrangebyscore(keys.rated_at(players), at - MARGIN_MS, "+inf")
        new = [str(m) for m in ids if str(m) not in seen]
        if not new:
            return False
        entries = await self.redis.hmget(keys.rated(players), new)
        return any(_older(e) for e in entries)

    async def _renew(self, players: int, freeze: bool = True) -> None:
        if not await self._lease(players, freeze):
            raise LeaseLost(f"ratings of {players} seats: another fix took over")

    async def keep(self, every_s: float = CHECK_S) -> None:
        """Check every size now, then every `every_s`, for as long as the gateway runs."""
        while True:
            for players in PLAYER_COUNTS:
                try:
                    await self.check(players)
                except (LeaseLost, OSError, TimeoutError) as exc:
                    log.warning("ratings of %d seats not put right yet (%s)", players, exc)
                except Exception:
                    log.exception("ratings of %d seats not put right yet", players)
            await asyncio.sleep(every_s)


def _older(entry: str | bytes | None) -> bool:
    """Whether an entry of `rated` was applied by the rule before issue 46."""
    return entry is not None and Settled.read(entry).rule == 0


def _same(old: Standing, new: Standing | None) -> bool:
    if new is None:
        return False
    return (
        math.isclose(old.rating.mu, new.rating.mu, abs_tol=SAME)
        and math.isclose(old.rating.sigma, new.rating.sigma, abs_tol=SAME)
        and (old.played, old.won) == (new.played, new.won)
    )


def _json(s: Standing, version: int) -> str:
    return json.dumps({**json.loads(s.to_json()), "v": version})


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


async def _main(args: argparse.Namespace) -> int:
    from cluster.settings import get_settings

    redis = async_redis(args.redis_url or get_settings().store())
    try:
        fix = RatingFix(redis, f"cli-{int(time.time())}")
        for players in args.players or PLAYER_COUNTS:
            print(json.dumps(asdict(await fix.check(players, again=args.again))), flush=True)
    finally:
        await redis.aclose()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m actors.rating_fix", description=__doc__)
    parser.add_argument("--redis-url", default="", help="REDIS_URL's store by default")
    parser.add_argument("--players", type=int, action="append", choices=PLAYER_COUNTS)
    parser.add_argument("--again", action="store_true", help="even when nothing is pending")
    return asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
