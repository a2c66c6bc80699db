"""Putting the store right for guests (issue 47): every profile made before guests expired is
judged once — lasting when it has a rated match or a passkey, else a guest's, expiring with its
newest session, or at once when none is left (gateway/guests.py, JUDGE).

**When.** By itself, at a gateway's start, unless a pass was done (the marker's `done` in
`keys.GUEST_MIGRATION`); and once more `ROLL_S` after a gateway's start when the last pass
began in the `ROLL_S` before that start — the gateway is one of a roll's, which gateways of the
release before may have gone on making profiles beside (gateways roll first, within minutes).
A profile it misses is judged anyway when one of its sessions is next used
(gateway/sessions.py). `python -m gateway.guest_migration [--again]` runs it by hand and prints
what it did.

**Once, whatever runs at once.** A pass holds a lease on the marker (a holder and a deadline,
renewed by every page): a gateway that finds another's live leaves it. Judging is idempotent
(a profile judged already is left as it is), so a pass stopped halfway is simply run again.

**Bounded steps, one slot each** (Redis Cluster). First the sessions: SCAN
`quatro:session:*` on every primary, `PAGE` keys at a time; each page's sessions read with
their remaining lifetimes (a pipeline of single-key reads), then on each player's profile not
judged yet the expiry of its newest session noted (NOTE: a script on the player's slot, queued
on a pipeline). Then the profiles: SCAN `quatro:{p-*}:profile`, and for each page whether each
player has a rating or a passkey (a pipeline of single-key reads), then each judged (JUDGE, a
script per profile on its slot, queued on a pipeline). It holds one page at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from actors import keys
from cluster.lease_lua import TAKE
from cluster.redis_client import AsyncRedis, async_redis, scan
from cluster.redis_ops import Pipeline, Script
from gateway.guests import JUDGE, NOTE, Guests, now_ms

log = logging.getLogger("quatro.gateway")

PAGE = 500  # keys read per step
LEASE_MS = 60_000  # a pass that stops renewing its lease for this long has died
ROLL_S = 1800.0  # after a gateway's start, when it looks again (a roll's older gateways gone)
EVERY_ROUND = 1 << 62  # SCAN rounds: no bound but the keyspace's end

# KEYS: the marker. ARGV: holder, lease (ms). 1: the lease is the holder's now; 0: another's
# is live. A script: the read of another's deadline and the taking must be one step.
LEASE = Script("guests.lease", TAKE + "return 1\n")

# KEYS: the marker. ARGV: holder, the pass's report (JSON). The lease given back, the report
# kept as `done`, if the holder still holds it.
FINISH = Script(
    "guests.finish",
    """
local held = redis.call('HGET', KEYS[1], 'lease')
if held and string.match(held, '^(.*) %d+$') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'lease')
redis.call('HSET', KEYS[1], 'done', ARGV[2])
return 1
""",
)
SESSIONS = Pipeline("guests.sessions")  # a page of sessions and their lifetimes
NOTES = Pipeline("guests.notes")  # a page of NOTE scripts
JUDGED = Pipeline("guests.judged")  # a page of JUDGE scripts


@dataclass
class MigrationReport:
    at: int = 0  # when the pass began (ms)
    sessions: int = 0  # sessions read
    profiles: int = 0  # profiles read
    lasting: int = 0  # judged lasting
    guests: int = 0  # judged a guest's, expiring with their newest session
    deleted: int = 0  # judged a guest's with no session left: gone
    judged_before: int = 0
    ms: int = 0
    ran: bool = False  # False: done before, or another gateway held the lease


class LeaseLost(RuntimeError):
    """Another gateway took the pass over."""


class GuestMigration:
    def __init__(self, redis: AsyncRedis, holder: str, session_ttl_s: int) -> None:
        self.redis = redis
        self.holder = holder
        self.guests = Guests(redis, session_ttl_s)

    async def done(self) -> dict[str, Any] | None:
        raw = await self.redis.hget(keys.GUEST_MIGRATION, "done")
        return None if raw is None else dict(json.loads(raw))

    async def run(self, again: bool = False) -> MigrationReport:
        """A pass, unless one was done (or, with `again`, in any case) or another runs."""
        report = MigrationReport(at=now_ms())
        if (not again and await self.done() is not None) or not await self._lease():
            return report
        started = time.monotonic()
        report.ran = True
        await self._sessions(report)
        await self._profiles(report)
        report.ms = round((time.monotonic() - started) * 1000)
        await FINISH.run(
            self.redis, [keys.GUEST_MIGRATION], [self.holder, json.dumps(asdict(report))]
        )
        log.info("profiles before guests judged: %s", asdict(report))
        return report

    async def _lease(self) -> bool:
        return (
            int(await LEASE.run(self.redis, [keys.GUEST_MIGRATION], [self.holder, LEASE_MS])) == 1
        )

    async def _pages(self, match: str) -> Any:
        page: list[str] = []
        async for key in scan(self.redis, match, EVERY_ROUND, PAGE):
            page.append(key)
            if len(page) == PAGE:
                yield page
                page = []
        if page:
            yield page

    async def _sessions(self, report: MigrationReport) -> None:
        """Each profile not judged yet notes when its newest session expires."""
        async for page in self._pages(keys.session("*")):
            if not await self._lease():
                raise LeaseLost("another gateway judges the profiles now")
            pipe = SESSIONS.on(self.redis)
            for key in page:
                pipe.get(key)
                pipe.pttl(key)
            found = await SESSIONS.run(pipe)
            now = now_ms()
            newest: dict[str, int] = {}
            for raw, ttl in zip(found[::2], found[1::2], strict=True):
                if raw is None or int(ttl) <= 0:
                    continue
                try:
                    player = str(json.loads(raw)["player_id"])
                except (ValueError, KeyError, TypeError):
                    continue
                newest[player] = max(newest.get(player, 0), now + int(ttl))
            report.sessions += len(page)
            pipe = NOTES.on(self.redis)
            for player, until in newest.items():
                NOTE.queue(pipe, [keys.profile(player)], [until])
            await NOTES.run(pipe)

    async def _profiles(self, report: MigrationReport) -> None:
        async for page in self._pages(keys.profile("p-*")):
            if not await self._lease():
                raise LeaseLost("another gateway judges the profiles now")
            ids = [_player_of(key) for key in page]
            worth = await self.guests.worth_keeping(ids)
            pipe = JUDGED.on(self.redis)
            now = now_ms()
            for pid, keep in zip(ids, worth, strict=True):
                JUDGE.queue(pipe, keys.owned(pid), ["1" if keep else "0", 0, now])
            for answer in await JUDGED.run(pipe):
                report.profiles += 1
                kind = int(answer)
                report.lasting += kind == 1
                report.guests += kind == 2
                report.deleted += kind == 3
                report.judged_before += kind == 0

    async def keep(self, roll_s: float = ROLL_S) -> None:
        """A pass now unless done; another `roll_s` later if the last began in the `roll_s`
        before this gateway started (then this is all it does)."""
        started = now_ms()
        await self._guarded(again=False)
        await asyncio.sleep(roll_s)
        done = await self.done()
        at = None if done is None else int(done.get("at", 0))
        if at is None or started - roll_s * 1000 < at < started:
            await self._guarded(again=True)

    async def _guarded(self, again: bool) -> None:
        try:
            await self.run(again)
        except (LeaseLost, OSError, TimeoutError) as exc:
            log.warning("profiles before guests not judged yet (%s)", exc)
        except Exception:
            log.exception("profiles before guests not judged yet")


def _player_of(key: str) -> str:
    """`quatro:{p-…}:profile` -> `p-…`."""
    return key[key.index("{") + 1 : key.index("}")]


async def _main(args: argparse.Namespace) -> int:
    from cluster.settings import get_settings

    settings = get_settings()
    redis = async_redis(args.redis_url or settings.store())
    try:
        migration = GuestMigration(redis, f"cli-{int(time.time())}", settings.session_ttl_s)
        print(json.dumps(asdict(await migration.run(again=args.again))), flush=True)
    finally:
        await redis.aclose()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.guest_migration", description=__doc__)
    parser.add_argument("--redis-url", default="", help="REDIS_URL's store by default")
    parser.add_argument("--again", action="store_true", help="even when a pass was done")
    return asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
