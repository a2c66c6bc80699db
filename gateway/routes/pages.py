"""The web client's page: `/`, the invite link `/t/{code}` and a replay `/replay/{table_id}`
serve the same index.html (the client reads the path); its files are under /static (mounted in
app.py)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from engine.errors import ErrorCode
from gateway.errors import ApiError

STATIC = Path(__file__).resolve().parent.parent / "static"

router = APIRouter(include_in_schema=False)


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
