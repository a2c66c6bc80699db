"""The web client's page: `/`, the invite link `/t/{code}`, a replay `/replay/{table_id}`, and
(issue 36) `/profile`, `/p/{player_id}` and `/leaderboard/{players}`
serve the same index.html (the client reads the path); its files are under /static (mounted in
app.py)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse

from engine.errors import ErrorCode
from gateway.errors import ApiError
from gateway.openapi import refusals

STATIC = Path(__file__).resolve().parent.parent / "static"

# In the OpenAPI as what they are: an HTML page, or 404 `not_found` without the web client.
router = APIRouter(
    tags=["pages"],
    default_response_class=HTMLResponse,
    responses=refusals((ErrorCode.NOT_FOUND, 404)),
)


def _index() -> FileResponse:
    index = STATIC / "index.html"
    if not index.is_file():
        raise ApiError(ErrorCode.NOT_FOUND, "the web client is not built in", 404)
    return FileResponse(index, media_type="text/html; charset=utf-8")


@router.get("/")
async def home() -> FileResponse:
    return _index()


@router.get("/t/{code}")
async def invite(code: str) -> FileResponse:
    return _index()


@router.get("/replay/{table_id}")
async def replay(table_id: str) -> FileResponse:
    """(ext) A finished table played back: the client fetches `/api/replays/{table_id}`."""
    return _index()


@router.get("/profile")
async def own_profile() -> FileResponse:
    """(ext) The player's own profile: the client fetches `/api/profiles/me`."""
    return _index()


@router.get("/p/{player_id}")
async def profile(player_id: str) -> FileResponse:
    """(ext) A player's profile as others see it: the client fetches `/api/profiles/{id}`."""
    return _index()


@router.get("/leaderboard/{players}")
async def leaderboard(players: str) -> FileResponse:
    """(ext) A table size's leaderboard: the client fetches `/api/leaderboards/{players}`."""
    return _index()
