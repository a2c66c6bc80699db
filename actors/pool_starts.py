"""The pool's starts: new table actors, each a worker process (~0.6 s alone, seconds on a
loaded node), started only within the slots the gate grants (actors/slots.py).

A new actor not placed and answering in time is killed (cancelled waiting, too): left in Ray's
queue, it could take the next free slot from a crashed table's restart.

A start still on its way after `STUCK_S` is *stuck* for the creations waiting (actors/pool.py):
they no longer count on it. Six seconds after a restart of Ray's head (its control store), one
new actor's creation stayed pending for 43 s, placed only after the head's next restart, while a
start made 11 s after it was placed in a second (the chart's pods, 7 December 2026:
docs/reliability.md). Under the autoscaler a start may wait `PLACE_WAIT_GROWING_S` before it is
given up, far past the `QUATRO_POOL_WAIT` of a creation waiting for it, which then answers 503
`unavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from actors.protocol import Probe
from actors.ray_calls import LastAnswer, ask
from actors.ray_names import Actors, Handle, new_name
from actors.slots import Slots
from actors.tasks import Tasks

log = logging.getLogger("quatro.pool")

# A new table actor not placed and answering by then is killed: a worker process starts in
# about a second, and far slower on a loaded node; a new Kubernetes worker pod (the
# autoscaler's answer to waiting tables) in a few minutes.
PLACE_WAIT_S = 30.0
PLACE_WAIT_GROWING_S = 300.0
# A start answers in about a second, seconds on a loaded node: past this, creations waiting do
# not count on it (a start of their own is made, within `at_once`).
STUCK_S = 10.0

Placed = Callable[[str, Handle], Awaitable[None]]  # what becomes of an actor placed


class Starts:
    def __init__(
        self,
        actors: Actors,
        slots: Slots,
        last_answer: LastAnswer,
        tasks: Tasks,
        placed: Placed,
        ended: Callable[[], None],
    ) -> None:
        """`placed`: given each new actor once it answers; `ended`: told after each start,
        placed or not (the refill looks again)."""
        self.actors = actors
        self.slots = slots
        self.last_answer = last_answer
        self.tasks = tasks
        self._placed = placed
        self._ended = ended
        self.count = 0  # started and not yet placed
        self.started = 0  # every start so far (metrics: starts per table created)
        self._begun: dict[int, float] = {}  # each start on its way (its number): when, monotonic
        self.stuck_s = STUCK_S
        self.none = asyncio.Event()  # set while `count` is 0
        self.none.set()
        self.last_end = float("-inf")  # monotonic: when the last start ended
        self.full = False  # the last start was not placed in time, or no room was granted

    def start(self, node: str = "") -> None:
        """One new actor, on `node` when it can (actors/placement.py), else where Ray says."""
        self.count += 1
        self.started += 1
        self._begun[self.started] = time.monotonic()
        self.none.clear()
        self.tasks.spawn(self._start(node, self.started), "start")

    def stuck(self, now: float) -> int:
        """How many starts on their way began `stuck_s` or more before `now`."""
        return sum(1 for begun in self._begun.values() if now - begun >= self.stuck_s)

    async def _start(self, node: str, number: int) -> None:
        try:
            name = new_name()
            # Ray asks its control store by name, then registers a named actor, both blocking
            # calls: off the event loop, which serves every player of this gateway (a busy or
            # stalled control store would stall them all).
            handle = await asyncio.to_thread(self.actors.start, name, node)
            if not await self._answers(name, handle):
                self.full = True
                return
            await self._placed(name, handle)
        except Exception:
            log.exception("a new table actor could not be started")
            self.full = True
        finally:
            self.count -= 1
            self._begun.pop(number, None)
            if self.count == 0:
                self.none.set()
            self.last_end = time.monotonic()
            self._ended()

    async def _answers(self, name: str, handle: Handle) -> bool:
        """Whether a new actor is placed and answers in time; one that is not is killed."""
        try:
            async with asyncio.timeout(
                PLACE_WAIT_GROWING_S if self.slots.can_grow else PLACE_WAIT_S
            ):
                await ask(handle, Probe())
        except BaseException as exc:
            with contextlib.suppress(Exception):  # the control store out of reach: nothing to do
                await asyncio.to_thread(self.actors.kill, handle)
            log.warning("new table actor %s not placed: killed (%s)", name, type(exc).__name__)
            if isinstance(exc, TimeoutError):
                return False
            raise
        self.last_answer.heard()
        return True
