"""The pool's floor: ready table actors an operator asks for ahead of a peak the demand cannot see
coming (a scheduled event, the evening), so that its first arrivals find their tables started.

Two ways, the higher one counts:
- a schedule, `QUATRO_POOL_FLOOR` (the chart's `gateway.tablePoolFloor`): a count, always
  (`"12"`), or windows of the day in UTC, each with its count (`"18:30-23:00=40,12:00-13:30=10"`;
  a window may run past midnight, `"22:00-01:00=20"`);
- for a one-off event, a floor kept in the store for a while, which every gateway of the cell
  reads within `FRESH_S`: `python -m actors.pool_floor set 60 --for 3h`, `show`, `clear`
  (docs/operations.md, "A known peak").

The floor lifts each gateway's target (actors/pool_demand.py), its maximum with it; the actors it
asks for are started as any buffer's are, paced one at a time (`QUATRO_POOL_START_GAP`), within
the free table slots (actors/slots.py), and the surplus trim never goes below it. Each holds a
table slot and ~90 MB (docs/performance.md, "Memory"), so set it some minutes before the peak,
and let it lapse after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from actors import keys
from cluster.redis_client import AsyncRedis, async_redis

log = logging.getLogger("quatro.pool")

FRESH_S = 5.0  # a gateway reads the stored floor again after this long
MOST = 10_000  # a floor past this is a typo, not a peak

_WINDOW = re.compile(r"^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})=(\d+)$")


class ScheduleError(ValueError):
    """A `QUATRO_POOL_FLOOR` that is not a count or a list of windows."""


@dataclass(frozen=True, slots=True)
class Window:
    """From `start` to `end` (minutes of the day, UTC; `end` before `start`: past midnight),
    a floor of `floor`."""

    start: int
    end: int
    floor: int

    def holds(self, minute: int) -> bool:
        if self.start <= self.end:
            return self.start <= minute < self.end
        return minute >= self.start or minute < self.end


def parse_schedule(text: str) -> tuple[Window, ...]:
    """`QUATRO_POOL_FLOOR` as windows ("" or "0": none; a bare count: the whole day). Raises
    ScheduleError, naming what it could not read."""
    text = text.strip()
    if not text:
        return ()
    if text.isdigit():
        return (Window(0, 0, _count(int(text))),) if int(text) else ()
    windows = []
    for part in (p.strip() for p in text.split(",")):
        m = _WINDOW.match(part)
        if m is None:
            raise ScheduleError(f"not a window HH:MM-HH:MM=N: {part[:40]!r}")
        h1, m1, h2, m2, n = (int(g) for g in m.groups())
        if h1 > 23 or h2 > 24 or m1 > 59 or m2 > 59:
            raise ScheduleError(f"not a time of day: {part[:40]!r}")
        windows.append(Window(h1 * 60 + m1, (h2 * 60 + m2) % (24 * 60), _count(n)))
    return tuple(windows)


def _count(n: int) -> int:
    if n > MOST:
        raise ScheduleError(f"a floor of {n} ready actors is past {MOST}")
    return n


def scheduled(windows: tuple[Window, ...], at: datetime) -> int:
    """The schedule's floor at `at` (its UTC time of day): the highest window holding it."""
    utc = at.astimezone(UTC)
    minute = utc.hour * 60 + utc.minute
    # A bare count is the window 00:00-00:00, which `holds` reads as the whole day.
    return max((w.floor for w in windows if w.start == w.end or w.holds(minute)), default=0)


class Floor:
    """A gateway's view of the floor: its schedule, and the store's floor read at most every
    `FRESH_S` (a store out of reach keeps the last reading)."""

    def __init__(
        self,
        redis: AsyncRedis,
        cell: str = "",
        schedule: tuple[Window, ...] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.redis = redis
        self.key = keys.pool_floor(cell)
        self.schedule = schedule
        self.clock = clock
        self._stored = 0
        self._read_at = float("-inf")
        self.last = 0  # for metrics: the floor at the last look

    async def now(self) -> int:
        """The floor now: the schedule's or the store's, whichever is higher."""
        t = self.clock()
        if t - self._read_at >= FRESH_S:
            self._read_at = t
            try:
                raw = await self.redis.get(self.key)
                self._stored = min(MOST, int(raw)) if raw is not None else 0
            except (ValueError, TypeError):
                self._stored = 0
            except Exception as exc:  # the store out of reach: the last reading stands
                log.debug("pool floor not read (%r)", exc)
        self.last = max(scheduled(self.schedule, datetime.fromtimestamp(t, UTC)), self._stored)
        return self.last


async def set_floor(redis: AsyncRedis, cell: str, floor: int, for_s: float) -> None:
    """Keep `floor` ready actors in `cell` for `for_s` seconds (0: clear it)."""
    key = keys.pool_floor(cell)
    if floor <= 0:
        await redis.delete(key)
        return
    await redis.set(key, str(_count(floor)), px=max(1, int(for_s * 1000)))


async def stored_floor(redis: AsyncRedis, cell: str) -> tuple[int, float]:
    """The stored floor and the seconds it has left (0, 0.0 when there is none)."""
    key = keys.pool_floor(cell)
    raw, ttl_ms = await asyncio.gather(redis.get(key), redis.pttl(key))
    if raw is None:
        return 0, 0.0
    return int(raw), max(0.0, int(ttl_ms) / 1000)


_UNITS = {"s": 1, "m": 60, "h": 3600}


def duration(text: str) -> float:
    """`90`, `90s`, `30m`, `3h` as seconds (argparse's type)."""
    text = text.strip().lower()
    unit = _UNITS.get(text[-1:], 0)
    number = text[:-1] if unit else text
    try:
        seconds = float(number) * (unit or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r}") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("a duration must be above 0")
    return seconds


async def _main(args: argparse.Namespace) -> int:
    from cluster.settings import get_settings

    settings = get_settings()
    cell = args.cell if args.cell is not None else settings.cell
    redis = async_redis(args.redis_url or settings.store())
    try:
        if args.act == "set":
            await set_floor(redis, cell, args.floor, args.for_s)
        elif args.act == "clear":
            await set_floor(redis, cell, 0, 0)
        floor, left = await stored_floor(redis, cell)
        windows = parse_schedule(settings.pool_floor)
        print(
            json.dumps(
                {
                    "cell": cell,
                    "stored": floor,
                    "stored_for_s": round(left),
                    "scheduled_now": scheduled(windows, datetime.now(UTC)),
                    "schedule": settings.pool_floor,
                }
            ),
            flush=True,
        )
        return 0
    finally:
        await redis.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m actors.pool_floor", description=__doc__)
    parser.add_argument("act", choices=("show", "set", "clear"))
    parser.add_argument("floor", nargs="?", type=int, default=0, help="set: ready actors")
    parser.add_argument(
        "--for", dest="for_s", type=duration, default=3 * 3600.0, help="set: 90s, 30m, 3h…"
    )
    parser.add_argument("--cell", default=None, help="the cell (default: QUATRO_CELL's)")
    parser.add_argument("--redis-url", default="", help="REDIS_URL's store by default")
    args = parser.parse_args(argv)
    if args.act == "set" and args.floor <= 0:
        parser.error("set needs a floor above 0 (or `clear`)")
    return asyncio.run(_main(args))


if __name__ == "__main__":
    raise SystemExit(main())
