"""The one owner of a table's tasks (its clock, its graces, its retried save, its announcements)
and of a gateway hub's (its link's sessions, its resync, its reports, its shielded calls).

A task made with a bare `create_task` belongs to nobody: when the table stops it goes on, and may
write to Redis after the table's records were deleted. Every task of a table is spawned here
instead, and `close` cancels them and waits until each has ended, so a stopped table leaves none
behind (tests/actors/test_table_core.py and tests/gateway/test_hub_tasks.py count them).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger("quatro.table")

T = TypeVar("T")


class Tasks:
    def __init__(self, owner: str, *, report: bool = True) -> None:
        """`report`: log a task that failed. A table's tasks are awaited by nobody, so their
        failures are logged here; a hub's are awaited by whoever asked (or catch their own), and
        a refused call must not become an error line."""
        self.owner = owner
        self.report = report
        self.closed = False
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Run `coro` as a task of this owner. Once closed, the task is cancelled before it
        starts: a call that arrives while a table stops must not start work that outlives it."""
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.owner}:{name}")
        if self.closed:
            task.cancel()
            return task
        self._tasks.add(task)
        task.add_done_callback(self._ended)
        return task

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if self.report and not task.cancelled() and task.exception() is not None:
            log.error("%s: task %s failed", self.owner, task.get_name(), exc_info=task.exception())

    def running(self) -> list[asyncio.Task[Any]]:
        return [t for t in self._tasks if not t.done()]

    async def close(self, grace: float = 0.0) -> None:
        """Cancel every task and wait for them all; with a `grace`, first let them end by
        themselves for up to that many seconds (a gateway's calls in flight when it shuts
        down). The task that calls this (the clock, when the table stops by itself) is left to
        return on its own."""
        self.closed = True
        me = asyncio.current_task()
        others = [t for t in self._tasks if t is not me]
        if grace > 0 and others:
            await asyncio.wait(others, timeout=grace)
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
