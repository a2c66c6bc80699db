"""The gateway's kept replays (gateway/replay_cache.py): served while the log keeps its length,
built once for callers arriving together, within a byte budget."""

from __future__ import annotations

import asyncio

from gateway.replay_cache import OVERHEAD, Built, ReplayCache


async def test_an_answer_is_kept_while_the_log_keeps_its_length() -> None:
    cache = ReplayCache()
    calls: list[int] = []

    async def build(n: int) -> Built:
        calls.append(n)
        return Built(n, b"x" * n)

    assert (await cache.fetch(("t", None), 10, lambda: build(10))).body == b"x" * 10
    assert (await cache.fetch(("t", None), 10, lambda: build(10))).length == 10
    assert calls == [10]
    # The log grew: built again. Another viewer's key is another answer.
    await cache.fetch(("t", None), 11, lambda: build(11))
    await cache.fetch(("t", "p1"), 11, lambda: build(11))
    assert calls == [10, 11, 11]
    # An expired log (length 0) is never served from here.
    await cache.fetch(("t", None), 0, lambda: build(0))
    assert calls == [10, 11, 11, 0]


async def test_callers_arriving_together_share_one_build() -> None:
    cache = ReplayCache()
    gate = asyncio.Event()
    calls = 0

    async def build() -> Built:
        nonlocal calls
        calls += 1
        await gate.wait()
        return Built(5, b"hello")

    waiting = [asyncio.create_task(cache.fetch(("t", None), 5, build)) for _ in range(50)]
    await asyncio.sleep(0)
    waiting[0].cancel()  # one caller leaves: the others still get the build
    gate.set()
    done = await asyncio.gather(*waiting[1:])
    assert calls == 1
    assert cache.builds == 1
    assert {d.body for d in done} == {b"hello"}


async def test_a_failed_build_is_not_kept() -> None:
    cache = ReplayCache()

    async def fails() -> Built:
        raise LookupError("gone")

    for _ in range(2):
        try:
            await cache.fetch(("t", None), 3, fails)
        except LookupError:
            pass
        else:
            raise AssertionError("the failure reached no caller")
    assert cache.builds == 2
    assert len(cache) == 0


def test_the_budget_drops_the_least_recently_used() -> None:
    cache = ReplayCache(budget=3 * (100 + OVERHEAD))
    for name in "abc":
        cache.put((name, None), Built(1, b"x" * 100))
    assert cache.get(("a", None), 1) is not None  # a is now the most recent
    cache.put(("d", None), Built(1, b"x" * 100))
    assert cache.get(("b", None), 1) is None
    assert all(cache.get((n, None), 1) for n in "acd")
    assert cache.size == 3 * (100 + OVERHEAD)
    cache.put(("huge", None), Built(1, b"x" * 10_000))  # bigger than the whole budget: not kept
    assert cache.get(("huge", None), 1) is None
    assert len(cache) == 3
