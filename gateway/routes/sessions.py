"""POST /api/sessions: a name in, a bearer token out; GET /api/sessions/tables: where that
session still holds a seat."""

from __future__ import annotations

import asyncio
import dataclasses

from fastapi import APIRouter

from actors.directory import TableGone
from actors.protocol import Seated, SeatOf
from gateway.deps import ClientIp, Me, Svc, quota
from gateway.errors import BACKEND_DOWN
from gateway.models import MyTable, MyTables, NewSession, SessionOut
from gateway.openapi import AUTH, BACKEND, QUOTA, refusals

router = APIRouter(prefix="/api", tags=["sessions"])

# Tables looked at per call: a player rarely sits at more than a few, and each costs an actor call.
MOST_TABLES = 8


@router.post(
    "/sessions",
    status_code=201,
    response_model=SessionOut,
    dependencies=[quota("session")],
    responses=refusals(*QUOTA, *BACKEND),
)
async def create_session(body: NewSession, svc: Svc, ip: ClientIp) -> SessionOut:
    """A new player, their session and their profile: a guest's, which expires with its last
    session unless it is kept (a rated match, a passkey, or `PATCH /api/profiles/me`
    `{"keep": true}`). Limited per address (`QUATRO_SESSION_RATE`, `_BURST`)."""
    token, session = await svc.sessions.create(body.name)
    # The first session of a player is their profile (gateway/profiles.py): nothing more is
    # asked to play, and a passkey added later brings it to other devices.
    await svc.guests.create(session.player_id, session.name, svc.tags.tag(ip))
    return SessionOut(token=token, player_id=session.player_id, name=session.name)


@router.get(
    "/sessions/tables",
    response_model=MyTables,
    dependencies=[quota("lookup")],
    responses=refusals(*AUTH, *QUOTA, *BACKEND),
)
async def my_tables(svc: Svc, me: Me) -> MyTables:
    """The live tables where the caller holds a seat, asked of each table; a table that is gone,
    where the seat was freed or whose match is over is forgotten (a finished match is not one
    to return to). One that does not answer in time is left out this time. 401 `bad_token`
    without a session."""

    async def look(code: str) -> MyTable | None:
        found: Seated | None
        try:
            async with asyncio.timeout(svc.settings.actor_timeout_s):
                found = await svc.directory.ask(code, SeatOf(me.player_id))
        except TableGone:
            found = None
        except BACKEND_DOWN:
            return None
        if found is not None and found.phase == "over":
            found = None
        if found is None:
            await svc.sessions.seated(me.player_id, code, None)
            return None
        return MyTable.model_validate({"code": code, **dataclasses.asdict(found)})

    codes = list(await svc.sessions.tables(me.player_id, MOST_TABLES))
    found = await asyncio.gather(*(look(code) for code in codes))
    return MyTables(tables=[row for row in found if row is not None])
