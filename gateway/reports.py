"""Reports of a name (issue 36), weighed by standing (issue 47): a name is hidden by people, not by
profiles made for the purpose.

- **Who may report.** A lasting profile (gateway/guests.py) with some standing: at least
  `STANDING_MATCHES` rated matches, every one of them against people (issue 46's rule), and
  `STANDING_DAYS` days of age. Anyone else is told so (`403 not_allowed`) and counts nothing: a
  profile costs one request, standing costs days and matches against people.
- **One per person**, as far as the server can tell: a report counts only if none of its
  reporter's address tags (where its sessions were seen, and where the report comes from:
  gateway/address_tags.py) is among those of a report already counted for that name. Two
  profiles of one person, or of one household, count once. The reporter is answered alike
  either way (200), so that a report tells nobody who else reported.
- **Several addresses to hide a name.** Counted reports therefore come from different
  addresses; `REPORTS_TO_HIDE` of them hide the name from others (leaderboards, the profile)
  until its owner changes it. The owner's profile says so (`name_hidden`), and asks for a new
  name; a rename clears the reports.
- **An operator** sees, clears and acts on them: `python -m gateway.reports list | show ID |
  clear ID | hide ID | delete ID` (docs/operations.md), on the deployment's store.

A passkey adds nothing to "one per person": a credential belongs to the one profile that
registered it first, so no two profiles ever share one (actors/rating_facts.py says the same of
ratings). What it cannot stop: three people, or one with three addresses (a phone's data, a
VPN), each with a profile of standing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from actors import keys
from actors.ratings import Standing
from cluster.redis_client import AsyncRedis, async_redis
from cluster.redis_ops import Script
from engine.cards import PLAYER_COUNTS
from engine.errors import ErrorCode
from gateway.errors import ApiError
from gateway.guests import now_ms
from gateway.profiles import Profiles, report_keys

REPORTS_TO_HIDE = 3  # counted reports, from as many addresses, that hide a name
STANDING_MATCHES = 5  # rated matches (against people) a reporter has played, all sizes
STANDING_DAYS = 3  # how old a reporter's profile is
DAY_MS = 24 * 3600 * 1000

# KEYS: the target's profile, reporters, report tags. ARGV: reporter, how many hide the name,
# the tag of the address the report comes from, then every tag of the reporter. Returns -1 no
# profile, 0 not counted (this reporter, or one of its addresses, counted already), 1 counted,
# 2 counted and the name hidden now. A script: the count and the hiding must see no rename
# (CHANGE) between them, and no deletion before them.
REPORT = Script(
    "reports.report",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
for i = 4, #ARGV do
  if redis.call('SISMEMBER', KEYS[3], ARGV[i]) == 1 then return 0 end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('SADD', KEYS[3], unpack(ARGV, 4))
if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[2]) then
  if redis.call('HGET', KEYS[1], 'name_hidden') ~= '1' then
    redis.call('HSET', KEYS[1], 'name_hidden', '1')
    return 2
  end
end
return 1
""",
)

# KEYS: a profile, then its reports (`profiles.report_keys`). ARGV: 'clear' (the reports gone,
# the name shown) or 'hide' (the name hidden now). 0: no such profile. An operator's act.
REVIEW = Script(
    "reports.review",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'clear' then
  redis.call('HSET', KEYS[1], 'name_hidden', '0')
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
else
  redis.call('HSET', KEYS[1], 'name_hidden', '1')
end
return 1
""",
)


class Reports:
    def __init__(self, redis: AsyncRedis, profiles: Profiles) -> None:
        self.redis = redis
        self.profiles = profiles

    async def standing(self, player_id: str, now: int) -> bool:
        """Whether the player's reports count: a lasting profile, old enough, with enough
        rated matches."""
        found = await self.profiles.get(player_id)
        if found is None or not found.lasting or found.created > now - STANDING_DAYS * DAY_MS:
            return False
        raw = [await self.redis.hget(keys.ratings(n), player_id) for n in PLAYER_COUNTS]
        return sum(Standing.read(x).played for x in raw if x is not None) >= STANDING_MATCHES

    async def report(self, reporter: str, player_id: str, address: str | None) -> None:
        """One report of `player_id`'s name by `reporter`, from the address tagged `address`
        (None: tags are off, every profile its own address)."""
        if reporter == player_id:
            raise ApiError(ErrorCode.NOT_ALLOWED, "you cannot report your own name")
        if await self.profiles.gone(player_id):
            raise ApiError(ErrorCode.UNKNOWN_PROFILE, "no such profile")
        now = now_ms()
        if not await self.standing(reporter, now):
            raise ApiError(
                ErrorCode.NOT_ALLOWED,
                f"a report counts from a kept profile {STANDING_DAYS} days old or more, with "
                f"{STANDING_MATCHES} rated matches against people",
            )
        own = address or f"p:{reporter}"
        tags = {own}
        if address is not None:
            tags.update(str(t) for t in await self.redis.zrange(keys.seen(reporter), 0, -1))
        counted = int(
            await REPORT.run(
                self.redis,
                [keys.profile(player_id), keys.reporters(player_id), keys.report_tags(player_id)],
                [reporter, REPORTS_TO_HIDE, own, *sorted(tags)],
            )
        )
        if counted < 0:
            raise ApiError(ErrorCode.UNKNOWN_PROFILE, "no such profile")
        if counted > 0:
            await self.redis.zadd(keys.REPORTED, {player_id: now})
        if counted == 2:
            await self._listed(player_id)

    async def _listed(self, player_id: str) -> None:
        profile = await self.profiles.get(player_id)
        if profile is not None:
            await self.profiles.list_names(profile)

    # -- an operator's ---------------------------------------------------------------------------
    async def reported(self, most: int) -> list[dict[str, Any]]:
        """The profiles last reported, newest first: name, whether hidden, counted reports."""
        rows: list[Any] = await self.redis.zrevrange(keys.REPORTED, 0, most - 1, withscores=True)
        return [await self.show(str(pid), int(at)) for pid, at in rows]

    async def show(self, player_id: str, at: int | None = None) -> dict[str, Any]:
        found = await self.profiles.get(player_id)
        reporters = await self.redis.hgetall(keys.reporters(player_id))
        return {
            "player_id": player_id,
            "name": None if found is None else found.name,
            "hidden": None if found is None else found.name_hidden,
            "lasting": None if found is None else found.lasting,
            "reports": len(reporters),
            "reporters": sorted(str(r) for r in reporters),
            "last_report": at,
        }

    async def review(self, player_id: str, act: str) -> bool:
        """`clear`: the reports forgotten and the name shown; `hide`: the name hidden now;
        `delete`: the profile deleted, as its owner would. False: no such profile."""
        if act == "delete":
            if await self.profiles.get(player_id) is None:
                return False
            await self.profiles.delete(player_id)
            return True
        names = [keys.profile(player_id), *report_keys(player_id)]
        done = int(await REVIEW.run(self.redis, names, [act])) == 1
        if act == "clear":
            await self.redis.zrem(keys.REPORTED, player_id)
        if done:
            await self._listed(player_id)
        return done


async def _main(args: argparse.Namespace) -> int:
    from cluster.settings import get_settings

    redis = async_redis(args.redis_url or get_settings().store())
    try:
        reports = Reports(redis, Profiles(redis))
        if args.act == "list":
            for row in await reports.reported(args.most):
                print(json.dumps(row), flush=True)
            return 0
        if not args.player:
            raise SystemExit(f"{args.act} needs a player id")
        if args.act == "show":
            print(json.dumps(await reports.show(args.player)), flush=True)
            return 0
        done = await reports.review(args.player, args.act)
        print(json.dumps({"player_id": args.player, args.act: done}), flush=True)
        return 0 if done else 1
    finally:
        await redis.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.reports", description=__doc__)
    parser.add_argument("act", choices=("list", "show", "clear", "hide", "delete"))
    parser.add_argument("player", nargs="?", default="", help="a player id (p-…)")
    parser.add_argument("--most", type=int, default=50, help="list: how many")
    parser.add_argument("--redis-url", default="", help="REDIS_URL's store by default")
    return asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
