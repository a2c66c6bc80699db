"""(ext) Quick play: POST /api/quickplay puts the caller at a public table of the size asked,
first come first seated across every gateway (gateway/quickplay.py), or opens a new one. The
engine's rules do the rest: a public table starts once full, and bots fill it at its deadline.

Abuse controls: one quick-play seat per player (asking again returns it), opening a table takes
a token of the per-IP `table` quota and one of the opener's `max_open_lobbies`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import uuid
from typing import Any

from fastapi import APIRouter

from actors.directory import TableGone
from actors.protocol import SeatOf
from engine.commands import TakeSeat
from engine.errors import ErrorCode
from gateway.deps import ClientIp, Me, Svc
from gateway.errors import ApiError
from gateway.models import QuickIn, QuickOut
from gateway.openapi import AUTH, BACKEND, QUOTA, refusals
from gateway.quickplay import PENDING, poll
from gateway.routes.tables import _act, _phase, _within

router = APIRouter(prefix="/api", tags=["quickplay"])
log = logging.getLogger("quatro.quickplay")

ATTEMPTS = 4  # tables tried before giving up (each found full, started or gone meanwhile)
# Opening a table may wait for a new actor process; in a burst (many tables at once) Ray starts
# them a few at a time, so the opener (and the players waiting for that table's code) wait
# this many `actor_timeout_s` rather than one: giving up sooner would only open more tables.
OPEN_PATIENCE = 3
RETRY_CODES = frozenset({"seat_taken", "wrong_phase", "unknown_table", "table_lost"})


def _offer_ms(fill_ms: int) -> int:
    """How long a new public table's seats are handed out: stop a little before its fill
    deadline, so a seat handed out is still free when its player gets there."""
    return max(1, fill_ms - min(fill_ms // 4, 10_000))


@router.post(
    "/quickplay",
    response_model=QuickOut,
    responses=refusals(
        *AUTH,
        *QUOTA,
        ErrorCode.TOO_MANY_LOBBIES,
        *BACKEND,
        ErrorCode.NO_ROOM,
        # The table's refusals of the seat found, but those that send it to the next table.
        ErrorCode.ALREADY_SEATED,
        ErrorCode.BAD_SEAT,
        ErrorCode.INTERNAL,
    ),
)
async def quick_play(body: QuickIn, svc: Svc, me: Me, ip: ClientIp) -> QuickOut:
    """A seat at a public table of `players` seats. 422 `bad_message` for another size; 429
    `rate_limited` / `too_many_lobbies` when this call would open a table past a quota; 503
    `unavailable` when no seat could be had in time. A player who already holds a quick-play
    seat (at a table not over) gets that seat back, whatever size they ask. A table this call
    opens starts its bots at relaxed while the caller has won fewer than 3 finished matches."""
    quick = svc.quick
    wait_s = (OPEN_PATIENCE + 1) * svc.settings.actor_timeout_s + 5
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 2 * wait_s
    while not await quick.claim(me.player_id, 2 * wait_s):
        if loop.time() > deadline:
            raise ApiError(
                ErrorCode.UNAVAILABLE, "your other quick-play request is still going", 503, 1
            )
        mine = await quick.mine(me.player_id)
        if mine == PENDING:  # another call of this player is finding their seat: wait for it
            await poll(lambda: _settled(svc, me.player_id), deadline - loop.time())
            continue
        if mine is not None:
            held = await _still_held(svc, me.player_id, json.loads(mine))
            if held is not None:
                return held
            await quick.drop(me.player_id, mine)
    try:
        out = await _find_seat(svc, me, ip, body.players)
    except BaseException:
        await quick.drop(me.player_id)
        raise
    await quick.keep(me.player_id, out.model_dump())
    await svc.sessions.seated(me.player_id, out.code, out.seat)
    return out


async def _settled(svc: Svc, player_id: str) -> str | None:
    mine = await svc.quick.mine(player_id)
    return None if mine == PENDING else (mine or "")


async def _still_held(svc: Svc, player_id: str, seat: dict[str, object]) -> QuickOut | None:
    """The recorded quick-play seat, if the player still holds it at a table not over."""
    out = QuickOut.model_validate(seat)
    try:
        found = await _within(svc, svc.directory.ask(out.code, SeatOf(player_id)))
    except TableGone:
        return None
    if found is None or found.seat != out.seat or found.phase == "over":
        return None
    return out


async def _find_seat(svc: Svc, me: Me, ip: str, players: int) -> QuickOut:
    quick = svc.quick
    fill_ms = int(svc.settings.quick_fill_s * 1000)
    wait_s = OPEN_PATIENCE * svc.settings.actor_timeout_s + 5
    unusable = ""
    level = await svc.profiles.level(me.player_id, players)  # quick play by level (issue 36)
    for _ in range(ATTEMPTS):
        token, seat = await quick.seat(
            players, uuid.uuid4().hex, _offer_ms(fill_ms), unusable, level, fill_ms
        )
        if seat == 0:
            code = await _open(svc, me, ip, players, token, fill_ms)
        else:
            found = await quick.code_of(token, wait_s)
            if found is None:
                unusable = token
                log.warning("quick play: a table to fill was not opened in time")
                continue
            code = found
            try:
                await _act(svc, code, me, TakeSeat(seat, me.player_id, me.name))
            except ApiError as exc:
                if exc.code not in RETRY_CODES:
                    raise
                unusable = token  # full, started or gone meanwhile: the next table
                log.info("quick play: seat %d at %s refused (%s), next table", seat, code, exc.code)
                continue
        record = await svc.directory.record(code)
        table_id = str(record["table_id"]) if record else code
        return QuickOut(code=code, table_id=table_id, seat=seat, players=players)
    raise ApiError(ErrorCode.UNAVAILABLE, "no quick-play seat could be had, retry", 503, 1)


async def _open_one(svc: Svc, me: Me, players: int, config: dict[str, Any]) -> str:
    # No guard of its own: the pool starts a bounded few actors at a time and serves the
    # creations waiting in the order they came, Play now's among private ones (issue 48:
    # two at a time here put a burst's third Play-now table behind every private one).
    return await svc.directory.create(players, config, me.player_id, me.name)


async def _open(svc: Svc, me: Me, ip: str, players: int, token: str, fill_ms: int) -> str:
    """Open the public table of `token`, the caller in seat 0, and tell the callers waiting for
    its other seats; on any failure tell them so (they try the next table)."""
    patience = OPEN_PATIENCE * svc.settings.actor_timeout_s
    try:
        await svc.limits.take("table", ip)
        ticket = await svc.lobbies.reserve(me.player_id, lambda code: _phase(svc, code))
        config = {
            "seed": secrets.randbits(62),
            "public": True,
            "fill_after_ms": fill_ms,
            # Nobody hosts it: its opener's count of wins decides (gateway/newcomers.py).
            "bot_level": await svc.newcomers.level(me.player_id),
        }
        try:
            code = await _within(svc, _open_one(svc, me, players, config), patience)
        except BaseException:
            await svc.lobbies.release(me.player_id, ticket)
            raise
        await svc.lobbies.opened(me.player_id, ticket, code)
    except BaseException:
        await svc.quick.failed(token)
        raise
    await svc.quick.opened(token, code)
    log.info("quick play: opened public table %s of %d seats", code, players)
    return code
