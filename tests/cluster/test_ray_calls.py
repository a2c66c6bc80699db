"""Every call to a table actor goes through one function (actors/ray_calls.py) and comes back as
its type: a real table actor in the stack's Ray, asked each call of actors/protocol.py, from a
pooled actor to an open table; an actor that answers otherwise (one of another release) is
refused, not read; and Ray's errors are told apart by their type. A Redis of its own keeps the
actor's records out of the stack's."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from ray.exceptions import ActorDiedError

from actors.protocol import (
    Act,
    Address,
    Endpoint,
    HandedOver,
    HandOver,
    Open,
    Outcome,
    Overview,
    Probe,
    Renew,
    Seated,
    SeatOf,
    Serve,
    Status,
    Summary,
    Unsubscribe,
)
from actors.ray_calls import ActorGone, ask, dead_for_good
from actors.ray_names import RayActors, new_name
from cluster.procs import RedisServer
from engine.errors import ErrorCode
from tests.conftest import Stack

CODE = "CALLS2"
IDLE = (600.0, 600.0)


async def test_a_table_actor_answers_every_call_with_its_type(stack: Stack) -> None:
    own = RedisServer()
    own.start()
    stack.driver()
    actors = RayActors(stack.namespace, own.url)
    handle: Any = None
    try:
        handle = actors.start(new_name())
        # A pooled actor: no table yet.
        status = await ask(handle, Probe())
        assert isinstance(status, Status)
        assert (status.code, status.seq) == ("", 0)
        assert status.pid > 0
        assert await ask(handle, Endpoint()) is None
        assert await ask(handle, Summary()) is None
        assert await ask(handle, SeatOf("p0")) is None

        opened = await ask(handle, Open(CODE, {"players": 4, "seed": 3}, "p0", "Ann", IDLE, 60))
        assert opened.ok, opened
        assert opened.seat == 0
        summary = await ask(handle, Summary())
        assert isinstance(summary, Overview)
        assert (summary.players, summary.phase, summary.wire["code"]) == (4, "lobby", CODE)
        assert await ask(handle, SeatOf("p0")) == Seated(0, 4, "lobby")
        assert await ask(handle, SeatOf("nobody")) is None
        where = await ask(handle, Endpoint())
        assert isinstance(where, Address)
        assert where.host == "127.0.0.1"  # embedded: every Ray node on loopback
        seated = await ask(
            handle, Serve(Act.of("c-1", "gw", "p1", "take_seat", {"seat": 1, "name": "Bo"}))
        )
        assert isinstance(seated, Outcome)
        assert (seated.ok, seated.seat) == (True, 1)
        assert (await ask(handle, Probe())).code == CODE

        # The one refusal type: a second table for the same actor.
        again = await ask(handle, Open("OTHER2", {"players": 4}, "p9", "Zed", IDLE, 60))
        assert not again.ok
        assert again.error is not None
        assert again.error.code == ErrorCode.NOT_ALLOWED
        assert await ask(handle, HandOver()) == HandedOver(CODE, True)
        assert await ask(handle, Renew("gw-none")) is False  # no subscription to renew
        await ask(handle, Unsubscribe("gw-none"))  # answered (with nothing), not refused

        # Stopped for good: Ray says so by the error's type (a call may still slip in before
        # the kill lands: asked until it does, within a deadline).
        actors.kill(handle)
        gone = None
        async with asyncio.timeout(30):
            while gone is None:
                try:
                    await ask(handle, Probe())
                except ActorGone as exc:
                    gone = exc
                await asyncio.sleep(0.05)
        assert isinstance(gone, ActorDiedError), repr(gone)
        assert dead_for_good(gone)
        handle = None
    finally:
        if handle is not None:
            with contextlib.suppress(Exception):
                actors.kill(handle)
        own.cleanup()


async def test_an_answer_not_of_the_calls_type_is_refused(stack: Stack) -> None:
    """An actor that answers as the actors before typed calls did (a dict read by key) is not
    believed: `ask` raises rather than hand a caller what it would misread."""
    ray = stack.driver()

    class Older:
        async def ask(self, call: object) -> object:
            return {"host": "127.0.0.1", "port": 20000, "incarnation": "x"}

    older: Any = ray.remote(num_cpus=0)(Older).remote()
    try:
        with pytest.raises(TypeError, match="Endpoint answered with a dict"):
            await ask(older, Endpoint())
    finally:
        ray.kill(older)
