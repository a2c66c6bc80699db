"""A whole match to 5 points (R28) with smart bots playing on the table actor's timers, at a
fast clock (time_scale), then a rematch."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from tests.cluster.client import Player, table_with
from tests.conftest import Stack


async def play_match(
    host: Player,
    partner: Player,
    before_call: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
) -> dict[str, object]:
    """Each round: both humans ready; the host calls Quatro! at once (unless a bot called
    first), after `before_call(round event)` if given; the host skips the pause. Until `over`."""
    async with asyncio.timeout(150):
        seen = host.last_seq
        while True:
            e = await host.wait_event(
                lambda e: e["type"] in ("signing", "round", "pause", "over"), after=seen
            )
            seen = e["seq"]
            if e["type"] == "over":
                return e
            if e["type"] == "signing":
                for p in (host, partner):
                    answer = await p.request("ready")
                    assert answer["type"] == "ack" or answer["code"] == "wrong_phase", answer
            elif e["type"] == "round":
                if before_call is not None:
                    await before_call(e)
                answer = await host.request("quatro")
                assert answer["type"] == "ack" or answer["code"] == "wrong_phase", answer
            elif e["type"] == "pause":
                answer = await host.request("next_round")
                assert answer["type"] == "ack" or answer["code"] == "wrong_phase", answer


async def test_r28_full_match_with_bots_to_five_points(stack: Stack) -> None:
    code, (host, partner) = await table_with(stack.b.url, 4, 2, time_scale=0.02, bot_policy="smart")
    # Seats 0 and 1 are the humans: partners are 0 and 2, so seat 1's team is with bot 3.
    assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
    over = await play_match(host, partner)
    scores = over["scores"]
    assert isinstance(scores, list)
    assert max(scores) == 5
    assert over["winners"] == [k for k, s in enumerate(scores) if s == 5]
    reveals = [e for e in host.events if e["type"] == "reveal"]
    assert len(reveals) >= 5
    assert reveals[-1]["scores"] == scores
    # R26: points are never taken back.
    for before, after in itertools.pairwise(reveals):
        assert all(b <= a for b, a in zip(before["scores"], after["scores"], strict=True))
    await partner.wait_event(lambda e: e["type"] == "over")
    summary = (await host.rest("GET", f"/api/tables/{code}")).json()
    assert summary["phase"] == "over"
    assert summary["scores"] == scores
    # Extension: the host starts a rematch with the same seats.
    assert (await host.rest("POST", f"/api/tables/{code}/rematch")).is_success
    last = partner.latest("over")
    assert last is not None
    fresh = await partner.wait_event(lambda e: e["type"] == "signing", after=last["seq"])
    assert fresh["round"] >= 1
    summary = (await host.rest("GET", f"/api/tables/{code}")).json()
    assert summary["scores"] == [0, 0]
    assert summary["round"] == 1
    for p in (host, partner):
        assert not p.problems
        await p.close()
