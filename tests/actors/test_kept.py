"""actors/kept.py, the walk that audits a reused actor: refused without the test hooks, and it
finds what an object reaches (attributes, containers, closures, coroutines) but not what only
modules reach."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from actors import kept
from engine.cards import deck_for

SECRET = "needle-7f3a"
SHARED = {"everyone": SECRET + "-global"}  # a module's: reachable from any function's globals


class Holder:
    def __init__(self) -> None:
        self.plain: object = None
        self.later: Callable[[], str] | None = None


def test_the_walk_is_refused_without_the_test_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(kept.HOOKS_ENV, raising=False)
    with pytest.raises(PermissionError):
        kept.inspect(Holder(), (SECRET,))


def test_the_walk_finds_what_an_object_reaches_and_not_a_modules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(kept.HOOKS_ENV, "1")

    async def run() -> None:
        empty = Holder()
        empty.later = lambda: SHARED["everyone"]  # only its globals reach that string
        nothing = kept.inspect(empty, (SECRET,))
        assert (nothing.found, nothing.engine, nothing.cut) == ((), 0, False)

        held = Holder()
        held.plain = {"deep": [(1, {SECRET.encode()})]}
        assert kept.inspect(held, (SECRET,)).found == (SECRET,)

        inside = SECRET + "-closure"
        closed = Holder()
        closed.later = lambda: inside
        assert kept.inspect(closed, (inside,)).found == (inside,)

        dealt = Holder()
        dealt.plain = [deck_for(4)[0]]  # an engine object: a card of a hand
        assert kept.inspect(dealt, ()).engine == 1

    asyncio.run(run())
