"""Built replays, kept per gateway so that asking again costs one LLEN, not a rebuild.

A replay is the whole stored log (up to 20,000 events) read from Redis, parsed and filtered:
anyone may ask for a public one, 20 times a second from one address. The log only ever grows
(and stops growing at its cap), so a log of the same length is the same replay: an answer is
kept with the length it was built from and served while the length holds. Refusals that need
the whole log (`not_finished`, `no_seat`) are kept the same way, and requests arriving while
one is built wait for that build instead of starting their own.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

DEFAULT_BUDGET = 64 << 20  # bytes of answers one gateway keeps
OVERHEAD = 256  # what an entry costs besides its body (a refusal is all overhead)


@dataclass(frozen=True)
class Built:
    length: int  # the log's length it was built from
    body: bytes  # the JSON answer, or b"" for a refusal
    refusal: str = ""  # the error code of a refusal
    matches: int = 0  # the finished matches it holds


Key = tuple[str, str | None]  # (table id, the player of an own view; None: the public view)


class ReplayCache:
    """Least recently used first out, within a byte budget."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self.size = 0
        self.builds = 0  # how many times a replay was built (not served from here)
        self._built: OrderedDict[Key, Built] = OrderedDict()
        self._building: dict[Key, asyncio.Future[Built]] = {}

    async def fetch(self, key: Key, length: int, build: Callable[[], Awaitable[Built]]) -> Built:
        """The answer for `key` whose log has `length` entries now: kept, being built, or
        built here. A caller that gives up (a closed request) does not cancel the build the
        others wait for."""
        kept = self.get(key, length) if length else None
        if kept is not None:
            return kept
        pending = self._building.get(key)
        if pending is None:
            pending = asyncio.ensure_future(build())
            self.builds += 1
            self._building[key] = pending
            pending.add_done_callback(lambda done: self._built_one(key, done))
        return await asyncio.shield(pending)

    def _built_one(self, key: Key, done: asyncio.Future[Built]) -> None:
        if self._building.get(key) is done:
            del self._building[key]
        if not done.cancelled() and done.exception() is None:
            self.put(key, done.result())

    def get(self, key: Key, length: int) -> Built | None:
        built = self._built.get(key)
        if built is None or built.length != length:
            return None
        self._built.move_to_end(key)
        return built

    def put(self, key: Key, built: Built) -> None:
        self._drop(key)
        if _cost(built) > self.budget:
            return
        self._built[key] = built
        self.size += _cost(built)
        while self.size > self.budget:
            self._drop(next(iter(self._built)))

    def __len__(self) -> int:
        return len(self._built)

    def _drop(self, key: Key) -> None:
        old = self._built.pop(key, None)
        if old is not None:
            self.size -= _cost(old)


def _cost(built: Built) -> int:
    return len(built.body) + OVERHEAD
