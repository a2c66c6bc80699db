"""(ext) Replays: a finished table's events, move by move, for everyone (the public view) or for
one of its players (their own seat's view, with their hands). The audience rules are
`actors.replay`'s; this reads the log from Redis and maps the answers to HTTP."""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query

from actors import keys, replay
from gateway.deps import Svc, current_session, quota
from gateway.errors import ApiError
from gateway.models import MatchSpan, ReplayOut

router = APIRouter(prefix="/api/replays", tags=["replays"])

# A table id is its actor's name (`keys.ACTOR_PREFIX` and hex): anything else names no replay.
TABLE_ID = re.compile(rf"^{re.escape(keys.ACTOR_PREFIX)}[0-9a-f]{{6,32}}$")


@router.get("/{table_id}", response_model=ReplayOut, dependencies=[quota("lookup")])
async def get_replay(
    table_id: str,
    svc: Svc,
    view: Annotated[Literal["public", "own"], Query()] = "public",
    authorization: Annotated[str | None, Header()] = None,
) -> ReplayOut:
    """The table's finished matches. `view=own` needs the caller's session (401 `bad_token`)
    and a seat they held there (403 `no_seat`); 404 `unknown_replay` when there is no such
    table or its replay has expired; 409 `not_finished` before its first match ends."""
    player_id = None
    if view == "own":
        player_id = (await current_session(svc, authorization)).player_id
    if not TABLE_ID.match(table_id):
        raise ApiError("unknown_replay", "no replay of that table")
    meta_raw = await svc.redis.get(keys.replay_meta(table_id))
    raw = [str(x) for x in await svc.redis.lrange(keys.replay(table_id), 0, -1)]
    if meta_raw is None or not raw:
        raise ApiError("unknown_replay", "no replay of that table (or it has expired)")
    try:
        built = replay.build(replay.read(raw), player_id)
    except replay.NotFinished as exc:
        raise ApiError("not_finished", "no match of this table has ended yet") from exc
    except replay.NeverSeated as exc:
        raise ApiError("no_seat", "you held no seat at this table") from exc
    meta = json.loads(meta_raw)
    return ReplayOut(
        table_id=table_id,
        code=str(meta["code"]),
        players=int(meta["players"]),
        view="public" if player_id is None else "own",
        seat=built.seat,
        start=meta["start"],
        matches=[MatchSpan(first=a, last=b) for a, b in built.matches],
        events=built.events,
    )
