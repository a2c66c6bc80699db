"""(ext) Profiles, leaderboards and passkeys (issue 36): the owner's profile (read, change, delete),
what anyone may read of another's, a report of a name, a size's leaderboard a page at a time and
the caller's own row on it, and passkeys: registered from a session, signed in with on another
device. docs/protocol.md, Profiles."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from engine.cards import PLAYER_COUNTS
from engine.errors import ErrorCode
from gateway.client_ip import scheme_of
from gateway.deps import ClientIp, Me, Svc, quota
from gateway.errors import ApiError
from gateway.leaderboards import MAX_PAGE
from gateway.models import Ok, SessionOut
from gateway.openapi import AUTH, BACKEND, QUOTA, refusals
from gateway.passkeys import Site, site_of
from gateway.profile_models import (
    BoardOut,
    BoardRow,
    MyProfile,
    PasskeyNew,
    PasskeyOptions,
    PasskeyOut,
    PasskeyRename,
    PasskeySignIn,
    ProfileChange,
    ProfileOut,
)
from gateway.profiles import Profile

router = APIRouter(prefix="/api", tags=["profiles"])

# A player's id (gateway/sessions.py): anything else names no profile (404, as an unknown one).
PLAYER_ID = re.compile(r"^p-[0-9a-f]{32}$")
PlayerId = Annotated[
    str,
    Path(
        description="a player's id, from a leaderboard or a history line",
        json_schema_extra={"pattern": PLAYER_ID.pattern},
    ),
]


def _size(
    players: Annotated[
        int,
        Path(
            description="the table size: 4, 6 or 8 seats",
            json_schema_extra={"enum": list(PLAYER_COUNTS)},
        ),
    ],
) -> int:
    if players not in PLAYER_COUNTS:
        raise ApiError(ErrorCode.BAD_MESSAGE, "path.players: a table has 4, 6 or 8 seats")
    return players


Players = Annotated[int, Depends(_size)]
KeyId = Annotated[str, Path(description="a passkey's id, from GET /api/profiles/me")]


async def _my_profile(svc: Svc, profile: Profile) -> dict[str, Any]:
    pid = profile.player_id
    return {
        "player_id": pid,
        "name": profile.name,
        "created": profile.created,
        "public": {"ratings": profile.ratings_public, "history": profile.history_public},
        "name_hidden": profile.name_hidden,
        "wins": await svc.newcomers.wins(pid),
        "ratings": {str(k): v for k, v in (await svc.profiles.standings(pid)).items()},
        "history": await svc.profiles.history(pid, own=True),
        "passkeys": await svc.passkeys.mine(pid),
        "lasting": profile.lasting,
        "expires": None if profile.lasting else await svc.guests.expires(pid),
    }


@router.get(
    "/profiles/me",
    response_model=MyProfile,
    dependencies=[quota("lookup")],
    responses=refusals(*AUTH, ErrorCode.UNKNOWN_PROFILE, *QUOTA, *BACKEND),
)
async def my_profile(svc: Svc, me: Me) -> dict[str, Any]:
    """Everything of the caller's profile: name, what it shows, ratings with ranks, the last
    matches, passkeys (by our id and label, never a credential id)."""
    return await _my_profile(svc, await svc.profiles.mine(me.player_id))


@router.patch(
    "/profiles/me",
    response_model=MyProfile,
    responses=refusals(*AUTH, ErrorCode.UNKNOWN_PROFILE, *BACKEND),
)
async def change_profile(body: ProfileChange, svc: Svc, me: Me) -> dict[str, Any]:
    """Rename (the name's rule is a session's: 422 `bad_message`), show or hide the ratings
    (with the name on leaderboards) and the history, keep a guest's profile for good. A field
    left out keeps its value. Tables where the player already sits keep the name they were
    given."""
    if body.keep:
        await svc.guests.keep(me.player_id)
    profile = await svc.profiles.change(me.player_id, body.name, body.ratings, body.history)
    return await _my_profile(svc, profile)


@router.delete(
    "/profiles/me",
    response_model=Ok,
    responses=refusals(*AUTH, *BACKEND),
)
async def delete_profile(svc: Svc, me: Me) -> Ok:
    """The profile goes for good: its sessions end, its passkeys stop working, its name leaves
    every leaderboard and the records of its matches (there: "deleted player"), its history and
    ratings are deleted."""
    await svc.profiles.delete(me.player_id)
    return Ok()


@router.get(
    "/profiles/{player_id}",
    response_model=ProfileOut,
    dependencies=[quota("lookup")],
    responses=refusals(ErrorCode.UNKNOWN_PROFILE, *QUOTA, *BACKEND),
)
async def get_profile(player_id: PlayerId, svc: Svc) -> dict[str, Any]:
    """What the owner shows: with `ratings`, the name and each size's rating, played and won;
    with `history`, the last matches (those of tables no longer open). 404 `unknown_profile`
    for a profile that shows nothing, is deleted, or does not exist: the three look alike."""
    found = await svc.profiles.get(player_id) if PLAYER_ID.match(player_id) else None
    if found is None or not found.public:
        raise ApiError(ErrorCode.UNKNOWN_PROFILE, "no such profile")
    ratings = None
    if found.ratings_public:
        standings = await svc.profiles.standings(player_id)
        ratings = {str(k): v for k, v in standings.items()}
    history = await svc.profiles.history(player_id, own=False) if found.history_public else None
    return {
        "player_id": player_id,
        "name": None if found.name_hidden else found.name,
        "ratings": ratings,
        "history": history,
    }


@router.post(
    "/profiles/{player_id}/report",
    response_model=Ok,
    responses=refusals(
        *AUTH, ErrorCode.UNKNOWN_PROFILE, (ErrorCode.NOT_ALLOWED, 403), *QUOTA, *BACKEND
    ),
)
async def report_name(player_id: PlayerId, svc: Svc, me: Me, ip: ClientIp) -> Ok:
    """Report the player's name as offensive. A report counts from a kept profile 3 days old
    or more with 5 rated matches against people (else 403 `not_allowed`), once per person as
    far as the server can tell (profiles seen at one address count once; answered alike);
    reports from 3 addresses hide the name everywhere others see it until its owner changes
    it. Limited per player (`QUATRO_REPORT_RATE`, `_BURST`) and per address (the `lookup`
    quota)."""
    await svc.limits.take("lookup", ip)
    await svc.limits.take("report", me.player_id)
    if not PLAYER_ID.match(player_id):
        raise ApiError(ErrorCode.UNKNOWN_PROFILE, "no such profile")
    await svc.reports.report(me.player_id, player_id, svc.tags.tag(ip))
    return Ok()


# -- Leaderboards ----------------------------------------------------------------------------------
@router.get(
    "/leaderboards/{players}",
    response_model=BoardOut,
    dependencies=[quota("lookup")],
    responses=refusals(*QUOTA, *BACKEND),
)
async def leaderboard(
    players: Players,
    svc: Svc,
    page: Annotated[int, Query(ge=1, le=MAX_PAGE, description="20 rows a page")] = 1,
) -> dict[str, Any]:
    """The established players of this table size (10 rated matches or more there), best
    first, 20 a page. A player who does not show their ratings is ranked without a name or a
    link."""
    return await svc.leaderboards.page(players, page, None)


@router.get(
    "/leaderboards/{players}/me",
    response_model=BoardRow | None,
    dependencies=[quota("lookup")],
    responses=refusals(*AUTH, *QUOTA, *BACKEND),
)
async def my_rank(players: Players, svc: Svc, me: Me) -> dict[str, Any] | None:
    """The caller's own row on this size's leaderboard: with their rank once listed; before
    that, `rank` null and the rated matches that `remain`; null before their first rated match
    there."""
    return await svc.leaderboards.row(players, me.player_id)


# -- Passkeys --------------------------------------------------------------------------------------
def site(request: Request, svc: Svc) -> Site:
    """The site the browser is on (its `Origin`, which must be the `Host` asked, with the
    scheme a trusted proxy says it used: TLS usually ends at the ingress)."""
    return site_of(
        request.headers.get("origin"),
        request.headers.get("host"),
        scheme_of(dict(request.scope), svc.proxies),
        svc.settings.passkey_rp_id,
    )


OnSite = Annotated[Site, Depends(site)]


@router.post(
    "/passkeys/options",
    response_model=PasskeyOptions,
    responses=refusals(*AUTH, ErrorCode.BAD_PASSKEY, *BACKEND),
)
async def passkey_options(svc: Svc, me: Me, where: OnSite) -> dict[str, Any]:
    """A challenge to register a passkey of the caller's profile: pass `options` to
    `navigator.credentials.create()` (binary fields are base64url), then POST the answer to
    /api/passkeys with `challenge_id` within 5 minutes. 401 `bad_passkey` from a page of
    another site (the `Origin` must be this host)."""
    return await svc.passkeys.register_options(where, me.player_id, me.name)


@router.post(
    "/passkeys",
    status_code=201,
    response_model=PasskeyOut,
    responses=refusals(*AUTH, ErrorCode.BAD_PASSKEY, (ErrorCode.NOT_ALLOWED, 403), *BACKEND),
)
async def add_passkey(body: PasskeyNew, svc: Svc, me: Me, where: OnSite) -> dict[str, Any]:
    """The browser's new passkey, verified (challenge, origin, site, signature) and kept: from
    now on it signs in to this profile on any device that has it, and the profile is kept for
    good (no guest's any more). Its label is numbered when another of the caller's reads alike.
    401 `bad_passkey` when it cannot be verified; 403 `not_allowed` past 10 passkeys."""
    added = await svc.passkeys.register(
        where, me.player_id, body.challenge_id, body.credential, body.label or ""
    )
    # A profile with a passkey is worth keeping (issue 47): it is no guest's any more.
    await svc.guests.keep(me.player_id)
    return added


@router.patch(
    "/passkeys/{key_id}",
    response_model=PasskeyOut,
    responses=refusals(*AUTH, ErrorCode.UNKNOWN_PASSKEY, *BACKEND),
)
async def rename_passkey(key_id: KeyId, body: PasskeyRename, svc: Svc, me: Me) -> dict[str, Any]:
    """A new label for one of the caller's passkeys (the characters of a name, 1-40 of them:
    422 `bad_message` otherwise). 404 `unknown_passkey` for an id that is not one of theirs."""
    return await svc.passkeys.rename(me.player_id, key_id, body.label)


@router.delete(
    "/passkeys/{key_id}",
    response_model=Ok,
    responses=refusals(*AUTH, ErrorCode.UNKNOWN_PASSKEY, *BACKEND),
)
async def remove_passkey(key_id: KeyId, svc: Svc, me: Me) -> Ok:
    """The passkey no longer signs in (the device keeps it until its owner removes it there)."""
    await svc.passkeys.remove(me.player_id, key_id)
    return Ok()


@router.post(
    "/passkeys/sign-in/options",
    response_model=PasskeyOptions,
    dependencies=[quota("session")],
    responses=refusals(ErrorCode.BAD_PASSKEY, *QUOTA, *BACKEND),
)
async def sign_in_options(svc: Svc, where: OnSite) -> dict[str, Any]:
    """A challenge to sign in with a passkey: pass `options` to `navigator.credentials.get()`
    (no credential is named: the device offers its passkeys for this site)."""
    return await svc.passkeys.sign_in_options(where)


@router.post(
    "/passkeys/sign-in",
    response_model=SessionOut,
    dependencies=[quota("session")],
    responses=refusals(ErrorCode.BAD_PASSKEY, *QUOTA, *BACKEND),
)
async def sign_in(body: PasskeySignIn, svc: Svc, where: OnSite) -> SessionOut:
    """A new session of the profile whose passkey signed the challenge: the same player, name,
    ratings and history as on the device where it was made. 401 `bad_passkey` when it cannot
    be verified, or its profile was deleted."""
    player_id = await svc.passkeys.sign_in(where, body.challenge_id, body.credential)
    profile = await svc.profiles.get(player_id)
    if profile is None:
        raise ApiError(ErrorCode.BAD_PASSKEY, "this passkey's profile was deleted")
    token, session = await svc.sessions.create(profile.name, player_id)
    return SessionOut(token=token, player_id=session.player_id, name=session.name)
