"""Tables over REST: create, look, and the lobby (R29). The table actor judges; this only maps
its answers to HTTP."""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections.abc import Awaitable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Path

from actors.directory import TableGone
from actors.protocol import Act, Outcome, Overview, Summary
from engine import DealSpec, ScenarioError, TableConfig
from engine.commands import (
    AddBot,
    AnswerClaim,
    CancelClaim,
    ChangeSettings,
    ClaimSeat,
    Command,
    FillBots,
    LeaveSeat,
    Rematch,
    RemoveBot,
    StartMatch,
    TakeSeat,
)
from engine.errors import ErrorCode
from engine.seating import team_of
from engine.wire import ASKER
from gateway.deps import Me, Svc, quota
from gateway.errors import BACKEND_DOWN, NO_REASON, ApiError
from gateway.models import (
    CODE_PATTERN,
    SEAT_SCHEMA,
    BotIn,
    BotsFilled,
    ClaimAnswer,
    ClaimOut,
    NewTable,
    Ok,
    SeatOut,
    SettingsIn,
    TableOut,
    TableSummary,
)
from gateway.openapi import AUTH, BACKEND, QUOTA, refusals

router = APIRouter(prefix="/api/tables", tags=["tables"])

# The shapes below are the schema's, not checked here: a code of another shape names no table
# (404 `unknown_table`, as a mistyped invite link is), and a seat past the table's last one is
# the table's to refuse (422 `bad_seat`), since only it knows its size.
Code = Annotated[
    str,
    Path(
        description="the table's invite code, 6 characters, read in either case",
        json_schema_extra={"pattern": CODE_PATTERN},
    ),
]
Seat = Annotated[
    int,
    Path(
        description="0 to players-1 (422 bad_seat past the table's last)",
        json_schema_extra=SEAT_SCHEMA,
    ),
]

# What every command at a table may answer: no session, no such table, a table that refused
# without a reason or did not answer; and, for a command from a seat, no seat there.
AT_TABLE = (*AUTH, ErrorCode.UNKNOWN_TABLE, ErrorCode.INTERNAL, *BACKEND)
FROM_SEAT = (*AT_TABLE, ErrorCode.NO_SEAT, ErrorCode.BAD_SEAT)
LOBBY = (ErrorCode.WRONG_PHASE,)
HOST = (ErrorCode.NOT_HOST, ErrorCode.NOT_ALLOWED)

T = TypeVar("T")


async def _within(svc: Svc, call: Awaitable[T], limit: float | None = None) -> T:
    """A table actor's answer within `limit`; 503 `unavailable` otherwise (a call through the
    hub is shielded: its events still reach the players when it ends later). By default
    (`table_wait_s`) a call waits through a restart of the table's actor, as commands over
    the socket do: a lost node's tables run elsewhere 14-25 s later, and a 15 s limit had
    answered `unavailable` while the cluster had room and the table was coming back."""
    try:
        async with asyncio.timeout(limit or svc.settings.table_wait_s):
            return await call
    except BACKEND_DOWN as exc:
        raise ApiError(
            ErrorCode.UNAVAILABLE,
            "the table did not answer in time (or is out of reach), retry",
            503,
            svc.settings.retry_after_s,
        ) from exc


def _config(body: NewTable, test_hooks: bool) -> dict[str, Any]:
    """The table's configuration; a `scenario` only with the test hooks on (403 otherwise)."""
    practice = {"practice": True} if body.practice else {}
    if body.scenario is None:
        return {"seed": secrets.randbits(62), **practice}
    if not test_hooks:
        raise ApiError(ErrorCode.FORBIDDEN, "scenarios need QUATRO_TEST_HOOKS=1 on the server", 403)
    sc = body.scenario
    deals = tuple(
        DealSpec(hands=tuple(tuple(h) for h in d.hands), center=tuple(d.center)) for d in sc.deals
    )
    try:
        TableConfig(players=body.players, seed=sc.seed, time_scale=sc.time_scale, deals=deals)
    except ScenarioError as exc:
        raise ApiError(ErrorCode.BAD_SCENARIO, str(exc), 422) from exc
    config: dict[str, Any] = {
        "seed": sc.seed,
        "time_scale": sc.time_scale,
        "deals": deals,
        **practice,
    }
    if sc.bot_policy is not None:
        config["bot_policy"] = sc.bot_policy
    return config


def _rest_id() -> str:
    return f"rest-{uuid.uuid4().hex}"


async def _act(svc: Svc, code: str, me: Me, command: Command) -> Outcome:
    """`command`, built here with the asker's seat left to the table (`ASKER`), judged there."""
    request = Act(_rest_id(), svc.gateway, me.player_id, command)
    try:
        reply = await _within(svc, svc.hubs.call(code.upper(), request))
    except TableGone as exc:
        raise ApiError(ErrorCode.UNKNOWN_TABLE, f"no table {code}") from exc
    assert isinstance(reply, Outcome)
    svc.hubs.feed(code.upper(), list(reply.events))
    if not reply.ok:
        raise ApiError.from_body(reply.error or NO_REASON)
    return reply


async def _phase(svc: Svc, code: str) -> str | None:
    """A table's phase, None when it is gone; "lobby" when it does not answer (kept, to be
    checked again next time)."""
    try:
        # Not through a restart: a creation asks this of the caller's other lobbies first.
        summary = await _within(
            svc, svc.directory.ask(code, Summary()), svc.settings.actor_timeout_s
        )
    except TableGone:
        return None
    except ApiError:
        return "lobby"
    return None if summary is None else summary.phase


@router.post(
    "",
    status_code=201,
    response_model=TableOut,
    dependencies=[quota("table")],
    responses=refusals(
        *AUTH,
        ErrorCode.FORBIDDEN,
        ErrorCode.BAD_SCENARIO,
        *QUOTA,
        ErrorCode.TOO_MANY_LOBBIES,
        *BACKEND,
        ErrorCode.NO_ROOM,
    ),
)
async def create_table(body: NewTable, svc: Svc, me: Me) -> TableOut:
    """The table's bots start at `bot_level`, or, left out, at relaxed while the caller has
    won fewer than 3 finished matches (docs/protocol.md, Tables). 429 `too_many_lobbies` when
    the caller already has `max_open_lobbies` tables that have not started; 429
    `rate_limited` past the per-IP quota; 503 `no_room` when every table slot is taken. In
    a burst that empties the pool of ready actors, a creation waits its turn for the next one
    (`QUATRO_POOL_WAIT`), then 503 `unavailable`."""
    config = _config(body, svc.settings.test_hooks)
    config["bot_level"] = await svc.newcomers.level(me.player_id, body.bot_level)
    ticket = await svc.lobbies.reserve(me.player_id, lambda code: _phase(svc, code))
    creating = svc.directory.create(body.players, config, me.player_id, me.name)
    try:
        code = await _within(svc, creating, svc.settings.pool_wait_s + svc.settings.actor_timeout_s)
    except BaseException:
        await svc.lobbies.release(me.player_id, ticket)
        raise
    await svc.lobbies.opened(me.player_id, ticket, code)
    record = await svc.directory.record(code)
    await svc.sessions.seated(me.player_id, code, 0)
    table_id = record["table_id"] if record else code
    return TableOut(table_id=table_id, code=code, players=body.players, host=0)


@router.get(
    "/{code}",
    response_model=TableSummary,
    dependencies=[quota("lookup")],
    responses=refusals(ErrorCode.UNKNOWN_TABLE, *QUOTA, *BACKEND),
)
async def get_table(code: Code, svc: Svc) -> dict[str, Any]:
    """Rate-limited per IP (429 `rate_limited`), so that invite codes cannot be scanned."""
    return (await _summary(code, svc)).wire


async def _summary(code: str, svc: Svc) -> Overview:
    try:
        summary = await _within(svc, svc.directory.ask(code.upper(), Summary()))
    except TableGone as exc:
        raise ApiError(ErrorCode.UNKNOWN_TABLE, f"no table {code}") from exc
    if summary is None:
        raise ApiError(ErrorCode.UNKNOWN_TABLE, f"no table {code}")
    return summary


@router.post(
    "/{code}/seats/{seat}",
    response_model=SeatOut,
    responses=refusals(
        *AT_TABLE, ErrorCode.BAD_SEAT, *LOBBY, ErrorCode.SEAT_TAKEN, ErrorCode.ALREADY_SEATED
    ),
)
async def take_seat(code: Code, seat: Seat, svc: Svc, me: Me) -> SeatOut:
    reply = await _act(svc, code, me, TakeSeat(seat, me.player_id, me.name))
    summary = await _summary(code, svc)
    await svc.sessions.seated(me.player_id, code.upper(), reply.seat)
    return SeatOut(seat=seat, team=team_of(seat, summary.players))


@router.delete(
    "/{code}/seats/{seat}",
    response_model=Ok,
    responses=refusals(*FROM_SEAT, *LOBBY, *HOST, ErrorCode.SEAT_EMPTY, *QUOTA),
)
async def leave_seat(code: Code, seat: Seat, svc: Svc, me: Me) -> Ok:
    """A player leaves their seat, or the host frees another's (a kick): at most
    `QUATRO_KICK_BURST` at once per player, then one every 1/`QUATRO_KICK_RATE` s (429)."""
    await svc.limits.take("kick", me.player_id)
    reply = await _act(svc, code, me, LeaveSeat(ASKER, target=seat))
    if reply.seat is None:
        await svc.sessions.seated(me.player_id, code.upper(), None)
    return Ok()


@router.post(
    "/{code}/bots",
    response_model=Ok,
    responses=refusals(*FROM_SEAT, *LOBBY, *HOST, ErrorCode.SEAT_TAKEN),
)
async def add_bot(code: Code, body: BotIn, svc: Svc, me: Me) -> Ok:
    await _act(svc, code, me, AddBot(ASKER, target=body.seat))
    return Ok()


@router.post(
    "/{code}/fill",
    response_model=BotsFilled,
    responses=refusals(*FROM_SEAT, *LOBBY, *HOST),
)
async def fill_bots(code: Code, svc: Svc, me: Me) -> BotsFilled:
    """The host puts a bot in every empty seat in one call (R29); they play at the table's bot
    level. 403 `not_host` (`not_allowed` at a public table), 409 `wrong_phase` after the start;
    a table with no empty seat answers `{"seats": []}` and changes nothing."""
    reply = await _act(svc, code, me, FillBots(ASKER))
    filled = [
        int(e.wire["seat"])
        for e in reply.events
        if e.wire.get("type") == "seat" and e.wire.get("kind") == "bot"
    ]
    return BotsFilled(seats=sorted(filled))


@router.delete(
    "/{code}/bots/{seat}",
    response_model=Ok,
    responses=refusals(*FROM_SEAT, *LOBBY, *HOST, ErrorCode.NOT_A_BOT),
)
async def remove_bot(code: Code, seat: Seat, svc: Svc, me: Me) -> Ok:
    await _act(svc, code, me, RemoveBot(ASKER, target=seat))
    return Ok()


@router.patch("/{code}/settings", response_model=Ok, responses=refusals(*FROM_SEAT, *LOBBY, *HOST))
async def change_settings(code: Code, body: SettingsIn, svc: Svc, me: Me) -> Ok:
    """Extension: the host sets the bot level and hints, in the lobby; the engine judges."""
    await _act(svc, code, me, ChangeSettings(ASKER, **body.model_dump(exclude_none=True)))
    return Ok()


@router.post(
    "/{code}/claims/{seat}",
    response_model=ClaimOut,
    dependencies=[quota("table")],
    responses=refusals(
        *AT_TABLE,
        *QUOTA,
        ErrorCode.BAD_SEAT,
        *LOBBY,
        ErrorCode.NOT_ALLOWED,
        ErrorCode.ALREADY_SEATED,
        ErrorCode.NOT_A_BOT,
        ErrorCode.ALREADY_CLAIMED,
        ErrorCode.SEAT_TAKEN,
        ErrorCode.NOT_WATCHING,
    ),
)
async def claim_seat(code: Code, seat: Seat, svc: Svc, me: Me) -> ClaimOut:
    """Extension (joining late): during the match, someone without a seat asks for the bot's
    seat `seat`; it becomes theirs at the next round's signing once the host grants it (or at
    once granted, when the table's `late_join` is `always`). Each request is told to the whole
    table, so asking and withdrawing in a loop would be a flood: requests take from the IP's
    table quota (429 `rate_limited`), and a host can end them all by closing the table to
    watchers."""
    await _act(svc, code, me, ClaimSeat(seat, me.player_id, me.name))
    summary = await _summary(code, svc)
    claims = TableSummary.model_validate(summary.wire).claims
    approved = any(c.seat == seat and c.approved for c in claims)
    return ClaimOut(seat=seat, team=team_of(seat, summary.players), approved=approved)


@router.delete(
    "/{code}/claims/mine", response_model=Ok, responses=refusals(*AT_TABLE, ErrorCode.NO_CLAIM)
)
async def cancel_claim(code: Code, svc: Svc, me: Me) -> Ok:
    """Extension (joining late): the caller withdraws their request (404 `no_claim` without)."""
    await _act(svc, code, me, CancelClaim(ASKER, me.player_id))
    return Ok()


@router.patch(
    "/{code}/claims/{seat}",
    response_model=Ok,
    responses=refusals(*FROM_SEAT, *HOST, ErrorCode.NO_CLAIM),
)
async def answer_claim(code: Code, seat: Seat, body: ClaimAnswer, svc: Svc, me: Me) -> Ok:
    """Extension (joining late): the host grants or refuses the request for seat `seat`."""
    await _act(svc, code, me, AnswerClaim(ASKER, target=seat, accept=body.accept))
    return Ok()


@router.post(
    "/{code}/start",
    response_model=Ok,
    responses=refusals(*FROM_SEAT, *LOBBY, *HOST, ErrorCode.TABLE_NOT_FULL),
)
async def start(code: Code, svc: Svc, me: Me) -> Ok:
    await _act(svc, code, me, StartMatch(ASKER))
    await svc.lobbies.release(me.player_id, code.upper())  # no longer an open lobby
    return Ok()


@router.post("/{code}/rematch", response_model=Ok, responses=refusals(*FROM_SEAT, *LOBBY, *HOST))
async def rematch(code: Code, svc: Svc, me: Me) -> Ok:
    """Extension: once the match is over, the host starts a new one with the same seats."""
    await _act(svc, code, me, Rematch(ASKER))
    return Ok()
