"""The web client's page: `/`, the invite link `/t/{code}`, a replay `/replay/{table_id}`, and
(issue 36) `/profile`, `/p/{player_id}` and `/leaderboard/{players}` serve the same page (the
client reads the path), rendered from index.html with every file named by its version
(gateway/client_page.py). Beside it, at the root because browsers look there: the service worker
`/sw.js` (its scope is the folder it is served from) and `/favicon.ico`. The files themselves are
under /static (gateway/static_files.py, mounted in app.py)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from engine.errors import ErrorCode
from gateway.client_page import WebClient
from gateway.errors import ApiError
from gateway.openapi import refusals
from gateway.security_headers import content_security_policy
from gateway.static_files import REVALIDATE, file_response

FAVICON = "icons/favicon.ico"


class JavaScriptResponse(Response):
    media_type = "text/javascript"


class IconResponse(Response):
    media_type = "image/x-icon"


# Every file here is revalidated by its ETag: a browser that sends it back gets 304, no body.
NOT_MODIFIED: dict[int | str, dict[str, Any]] = {304: {"description": "Not modified (ETag)"}}

# In the OpenAPI as what they are: an HTML page, or 404 `not_found` without the web client.
router = APIRouter(
    tags=["pages"],
    default_response_class=HTMLResponse,
    responses={**refusals((ErrorCode.NOT_FOUND, 404)), **NOT_MODIFIED},
)


def _client(request: Request) -> WebClient:
    client: WebClient = request.app.state.web_client
    return client


def _missing() -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, "the web client is not built in", 404)


async def _page(request: Request) -> Response:
    page = _client(request).page()
    if page is None:
        raise _missing()
    csp = content_security_policy(page.script_hashes)
    return await file_response(
        page.file, request.headers, REVALIDATE, [("content-security-policy", csp)]
    )


@router.get("/")
async def home(request: Request) -> Response:
    return await _page(request)


@router.get("/t/{code}")
async def invite(code: str, request: Request) -> Response:
    return await _page(request)


@router.get("/replay/{table_id}")
async def replay(table_id: str, request: Request) -> Response:
    """(ext) A finished table played back: the client fetches `/api/replays/{table_id}`."""
    return await _page(request)


@router.get("/profile")
async def own_profile(request: Request) -> Response:
    """(ext) The player's own profile: the client fetches `/api/profiles/me`."""
    return await _page(request)


@router.get("/p/{player_id}")
async def profile(player_id: str, request: Request) -> Response:
    """(ext) A player's profile as others see it: the client fetches `/api/profiles/{id}`."""
    return await _page(request)


@router.get("/leaderboard/{players}")
async def leaderboard(players: str, request: Request) -> Response:
    """(ext) A table size's leaderboard: the client fetches `/api/leaderboards/{players}`."""
    return await _page(request)


@router.get("/sw.js", response_class=JavaScriptResponse)
async def service_worker(request: Request) -> Response:
    """The service worker, its list of the client's files first (the list's changes are what
    make browsers install a new worker). Never kept without asking: browsers check it on each
    visit, and a stale one would hold players to an old client."""
    worker = _client(request).worker()
    if worker is None:
        raise _missing()
    return await file_response(worker, request.headers, REVALIDATE)


@router.get("/favicon.ico", response_class=IconResponse)
async def favicon(request: Request) -> Response:
    icon = _client(request).files.get(FAVICON)
    if icon is None:
        raise _missing()
    return await file_response(icon, request.headers, REVALIDATE)
