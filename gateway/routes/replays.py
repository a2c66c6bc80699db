"""(ext) Replays: a finished table's events, move by move, for everyone (the public view) or for
one of its players (their own seat's view, with their hands). The audience rules are
`actors.replay`'s; this reads the log from Redis and maps the answers to HTTP. Answers are
kept per gateway while the log keeps its length (gateway.replay_cache): asking again is cheap."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from actors import keys, legacy_keys, replay
from actors.ratings import match_id
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline
from engine.errors import ErrorCode
from gateway.deps import ClientIp, Credentials, Svc, current_session, quota
from gateway.errors import ApiError
from gateway.models import MatchSpan, ReplayOut
from gateway.openapi import AUTH, BACKEND, QUOTA, refusals
from gateway.replay_cache import Built

router = APIRouter(prefix="/api/replays", tags=["replays"])

# A table id is shaped as an actor's name (`keys.ACTOR_PREFIX` and hex; before actors served table
# after table it was the actor's name, `actors/ray_names.py`): anything else names no replay.
# (The prefix is letters and a dash, literal in a regular expression as the OpenAPI's pattern.)
TABLE_ID = re.compile(rf"^{keys.ACTOR_PREFIX}[0-9a-f]{{6,32}}$")


@router.get(
    "/{table_id}",
    response_model=ReplayOut,
    dependencies=[quota("lookup")],
    responses=refusals(
        *AUTH,
        ErrorCode.UNKNOWN_REPLAY,
        ErrorCode.NOT_FINISHED,
        ErrorCode.NO_SEAT,
        (ErrorCode.WATCHING_OFF, 403),
        *QUOTA,
        *BACKEND,
    ),
    # The session is for `view=own` only: everyone's view needs none.
    openapi_extra={"security": [{}]},
)
async def get_replay(
    # Not checked by FastAPI: an id of another shape names no replay (404), as an unknown one.
    table_id: Annotated[str, Path(json_schema_extra={"pattern": TABLE_ID.pattern})],
    svc: Svc,
    credentials: Credentials,
    ip: ClientIp,
    view: Annotated[Literal["public", "own"], Query()] = "public",
) -> Response:
    """The table's finished matches. `view=own` needs the caller's session (401 `bad_token`)
    and a seat they held there (403 `no_seat`); 404 `unknown_replay` when there is no such
    table or its replay has expired; 409 `not_finished` before its first match ends; 403
    `watching_off` for the public view of a table its host closed to watchers."""
    player_id = None
    if view == "own":
        player_id = (await current_session(svc, credentials, ip)).player_id
    if not TABLE_ID.match(table_id):
        raise ApiError(ErrorCode.UNKNOWN_REPLAY, "no replay of that table")
    where = await locate(svc.redis, table_id)
    length = int(await svc.redis.llen(where.log))
    built = await svc.replays.fetch(
        (table_id, player_id), length, lambda: _build(svc, table_id, player_id, where)
    )
    if built.refusal:
        status, message = REFUSALS[built.refusal]
        raise ApiError(built.refusal, message, status)
    # The players of each match, read now rather than kept with the cached answer: a profile
    # shown, hidden or deleted since changes its links at once (issue 36).
    lineups = await _lineups(svc, table_id, built.matches)
    return Response(
        built.body[:-1] + b',"lineups":' + lineups + b"}", media_type="application/json"
    )


async def _lineups(svc: Svc, table_id: str, matches: int) -> bytes:
    shown: dict[str, bool] = {}
    found = [
        await svc.profiles.match_players(match_id(table_id, n + 1), shown) for n in range(matches)
    ]
    return json.dumps(found, separators=(",", ":")).encode()


REFUSALS: dict[str, tuple[int, str]] = {
    ErrorCode.NOT_FINISHED: (409, "no match of this table has ended yet"),
    ErrorCode.NO_SEAT: (403, "you held no seat at this table"),
    ErrorCode.WATCHING_OFF: (
        403,
        "the host closed this table to watchers: only its players replay it",
    ),
}


# A replay's meta and its log (one slot: its table's; its meta is written once, its log only
# grows, so the two read together agree).
READ = Pipeline("replays.read")
# A replay of a table that stopped before hash tags (actors/legacy_keys.py): two slots, so no
# transaction; its table stopped, so nothing appends to it any more.
READ_LEGACY = Pipeline("replays.read-legacy")


@dataclass(frozen=True)
class Where:
    """A replay's keys, and how to read them together."""

    meta: str
    log: str
    read: Pipeline


async def locate(redis: AsyncRedis, table_id: str) -> Where:
    """The replay's meta and log keys: in its table's slot, found from the actor's record,
    which names the code (a step of its own: another slot); else where a table of the release
    before hash tags left them."""
    code = await redis.get(keys.actor(table_id))
    if code is not None:
        meta, log = keys.replay_meta(str(code), table_id), keys.replay(str(code), table_id)
        if await redis.exists(meta):
            return Where(meta, log, READ)
    return Where(legacy_keys.replay_meta(table_id), legacy_keys.replay(table_id), READ_LEGACY)


async def read(redis: AsyncRedis, where: Where) -> tuple[str | None, list[str]]:
    """The replay's meta and its log as they are now (read together, so the two agree)."""
    pipe = where.read.on(redis)
    pipe.get(where.meta)
    pipe.lrange(where.log, 0, -1)
    meta, log = await where.read.run(pipe)
    return (None if meta is None else str(meta)), [str(x) for x in log]


async def _build(svc: Svc, table_id: str, player_id: str | None, where: Where) -> Built:
    """The answer from the log as it is now, with the length it was built from."""
    meta_raw, raw = await read(svc.redis, where)
    if meta_raw is None or not raw:
        raise ApiError(ErrorCode.UNKNOWN_REPLAY, "no replay of that table (or it has expired)")
    try:
        built = replay.build(replay.read(raw), player_id)
    except replay.NotFinished:
        return Built(len(raw), b"", "not_finished")
    except replay.NeverSeated:
        return Built(len(raw), b"", "no_seat")
    except replay.ClosedToWatchers:
        return Built(len(raw), b"", "watching_off")
    meta = json.loads(meta_raw)
    out = ReplayOut(
        table_id=table_id,
        code=str(meta["code"]),
        players=int(meta["players"]),
        view="public" if player_id is None else "own",
        seat=built.seat,
        start=meta["start"],
        matches=[MatchSpan(first=a, last=b) for a, b in built.matches],
        events=built.events,
    )
    return Built(len(raw), out.model_dump_json(exclude={"lineups"}).encode(), "", len(out.matches))
