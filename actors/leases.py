"""The gateways that follow a table, and how a table notices one died without saying so.

A gateway follows through one subscription (its data-plane connection, or a leased Ray
streaming generator kept for A/B runs). A lease that runs out, or a data-plane connection that
broke and is not back within LEASE_S, means the gateway died: its players are disconnected.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Protocol

from actors.feed import LEASE_S, Feed
from actors.protocol import Batch
from actors.tasks import Tasks

log = logging.getLogger("quatro.table")


class Followed(Protocol):
    """What the leases need of their table."""

    feed: Feed
    tasks: Tasks

    def gateway_left(self, gateway: str) -> None:
        """Its hub stopped, saying so: none of its watchers is left."""

    async def gateway_gone(self, gateway: str) -> None:
        """It died without saying so: its players are disconnected."""


class Leases:
    def __init__(self, core: Followed) -> None:
        self.core = core
        self._gone_checks: dict[str, asyncio.Task[None]] = {}  # gateway -> its grace

    async def follow(self, gateway: str, after: int, leased: bool) -> AsyncIterator[Batch]:
        """Batches of events for one gateway. The first replays everything after `after` (or
        says `resync` when the log no longer holds it); later ones leave out the events of
        this gateway's own commands, which reached it in their replies."""
        feed = self.core.feed
        sub = feed.subscribe(gateway, after)
        self._gone_checks.pop(gateway, None)
        expired = False
        try:
            upto = feed.published
            if after < 0:  # a new follower: from now on
                yield Batch((), upto)
            elif feed.covers(after):
                yield Batch(tuple(feed.since(after, upto)), upto)
            else:
                yield Batch((), upto, resync=True)
            sub.sent = upto
            while not sub.ended:
                remaining = sub.lease_until - time.monotonic() if leased else None
                if remaining is not None and remaining <= 0:
                    expired = True
                    break
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await sub.wake.wait()
                sub.wake.clear()
                if sub.ended:
                    break
                upto = feed.published
                batch = feed.since(sub.sent, upto, skip_origin=gateway)
                sub.sent = upto
                if batch:
                    yield Batch(tuple(batch))
        finally:
            current = feed.drop(sub)
            if current and expired:
                await self.core.gateway_gone(gateway)

    def renew(self, gateway: str) -> bool:
        sub = self.core.feed.subs.get(gateway)
        if sub is not None:
            sub.renew()
        return sub is not None

    def unsubscribe(self, gateway: str) -> None:
        sub = self.core.feed.subs.get(gateway)
        if sub is not None:
            sub.ended = True
            sub.wake.set()

    def end_all(self) -> None:
        """The table stops: every subscription ends (a link's pusher then says `Gone`)."""
        for sub in self.core.feed.subs.values():
            sub.ended = True
            sub.wake.set()

    def link_ended(self, gateway: str, orderly: bool) -> None:
        """A gateway's data-plane connection closed. Said goodbye: nothing to do. Otherwise it
        may be back in a moment (a blip, a restart of ours it is catching up with); if it is
        not back within the lease, its players are disconnected."""
        if gateway in self.core.feed.subs:
            return
        if orderly:
            self.core.gateway_left(gateway)
            return
        task = self.core.tasks.spawn(self._gone_after_grace(gateway), "gone-check")
        self._gone_checks[gateway] = task

    async def _gone_after_grace(self, gateway: str) -> None:
        await asyncio.sleep(LEASE_S)
        if self._gone_checks.get(gateway) is asyncio.current_task():
            del self._gone_checks[gateway]
            if gateway not in self.core.feed.subs:
                await self.core.gateway_gone(gateway)
