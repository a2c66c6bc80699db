"""(ext) The guided practice round (issue 46). `POST /api/tutorial` opens one for the caller,
who sits in seat 0 as its learner: the script's bots take the other seats and the first
lesson's signing begins at once (engine/tutorial.py, engine/coach.py). The server chooses
everything; the client only asks for "the tutorial". `DELETE /api/tutorial/{code}`: the learner
leaves it before its end (the match is over, nobody won), and it no longer counts among the
tables they sit at.

Abuse controls: one tutorial per player at a time (asking again while theirs is under way
answers that one), and those of any table the caller opens — a token of the per-IP `table`
quota, and one of the caller's `max_open_lobbies` while it opens (it never waits in a lobby
after that). It is a practice table: never rated.
"""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter

from actors import keys
from engine.commands import EndTutorial
from engine.errors import ErrorCode
from engine.wire import ASKER
from gateway.deps import Me, Svc, quota
from gateway.errors import ApiError
from gateway.models import NewTutorial, Ok, TableOut
from gateway.openapi import AUTH, BACKEND, QUOTA, refusals
from gateway.routes.tables import FROM_SEAT, Code, _act, _phase, _within

router = APIRouter(prefix="/api/tutorial", tags=["tutorial"])

PLAYERS = 4  # engine.tutorial's tables are all of 4 seats
HELD_S = 24 * 3600  # how long a player's tutorial is remembered (its phase has the last word)


def _config(body: NewTutorial | None, test_hooks: bool) -> dict[str, Any]:
    """A tutorial's configuration: its deals and bots come from its script; a `scenario` (a
    seed and a time scale for tests) only with the test hooks on (403 otherwise)."""
    config: dict[str, Any] = {
        "tutorial": True,
        "bot_policy": "tutorial",
        "seed": secrets.randbits(62),
    }
    if body is None or body.scenario is None:
        return config
    if not test_hooks:
        raise ApiError(ErrorCode.FORBIDDEN, "scenarios need QUATRO_TEST_HOOKS=1 on the server", 403)
    return {**config, "seed": body.scenario.seed, "time_scale": body.scenario.time_scale}


@router.post(
    "",
    status_code=201,
    response_model=TableOut,
    dependencies=[quota("table")],
    responses=refusals(
        *AUTH, ErrorCode.FORBIDDEN, *QUOTA, ErrorCode.TOO_MANY_LOBBIES, *BACKEND, ErrorCode.NO_ROOM
    ),
)
async def start_tutorial(svc: Svc, me: Me, body: NewTutorial | None = None) -> TableOut:
    """A new tutorial table, the caller in seat 0 as its learner; its first lesson's signing
    has begun and waits for them. The caller's tutorial still under way, if there is one. As
    for any new table: 429 `rate_limited` past the per-IP quota, `too_many_lobbies` when the
    caller already has `max_open_lobbies` tables waiting in their lobby, 503 `no_room` when
    every table slot is taken."""
    config = _config(body, svc.settings.test_hooks)
    held = keys.player_tutorial(me.player_id)
    if (code := await svc.redis.get(held)) is not None:
        code = code.decode() if isinstance(code, bytes) else str(code)
        if await _phase(svc, code) not in (None, "over"):
            return await _table_out(svc, code)
    ticket = await svc.lobbies.reserve(me.player_id, lambda code: _phase(svc, code))
    try:
        creating = svc.directory.create(PLAYERS, config, me.player_id, me.name)
        code = await _within(svc, creating, svc.settings.pool_wait_s + svc.settings.actor_timeout_s)
    finally:
        # Its match begins as its learner sits down, when it opens: never an open lobby.
        await svc.lobbies.release(me.player_id, ticket)
    await svc.redis.set(held, code, ex=HELD_S)
    await svc.sessions.seated(me.player_id, code, 0)
    return await _table_out(svc, code)


async def _table_out(svc: Svc, code: str) -> TableOut:
    record = await svc.directory.record(code)
    table_id = record["table_id"] if record else code
    return TableOut(table_id=table_id, code=code, players=PLAYERS, host=0)


@router.delete(
    "/{code}",
    response_model=Ok,
    responses=refusals(*FROM_SEAT, ErrorCode.NOT_ALLOWED, ErrorCode.WRONG_PHASE),
)
async def leave_tutorial(code: Code, svc: Svc, me: Me) -> Ok:
    """The learner leaves their tutorial: its match is over at once, nobody won, and the
    table idles out as a finished one. 403 `not_allowed` at a table that is no tutorial, or
    for a seat that is not its learner's; leaving one already over changes nothing."""
    await _act(svc, code, me, EndTutorial(ASKER))
    await svc.sessions.seated(me.player_id, code.upper(), None)
    return Ok()
