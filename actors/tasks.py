"""The one owner of a table's tasks: its clock, its graces, its retried save, its announcements.

A task made with a bare `create_task` belongs to nobody: when the table stops it goes on, and may
write to Redis after the table's records were deleted. Every task of a table is spawned here
instead, and `close` cancels them and waits until each has ended, so a stopped table leaves none
behind (tests/actors/test_table_core.py counts them).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger("quatro.table")

T = TypeVar("T")


class Tasks:
    def __init__(self, owner: str) -> None:
        self.owner = owner
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
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: task %s failed", self.owner, task.get_name(), exc_info=task.exception())

    def running(self) -> list[asyncio.Task[Any]]:
        return [t for t in self._tasks if not t.done()]

    async def close(self) -> None:
        """Cancel every task and wait for them all. The task that calls this (the clock, when
        the table stops by itself) is left to return on its own."""
        self.closed = True
        me = asyncio.current_task()
        others = [t for t in self._tasks if t is not me]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
