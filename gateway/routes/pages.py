"""The web client's page: `/`, the invite link `/t/{code}`, a replay `/replay/{table_id}`, and
(issue 36) `/profile`, `/p/{player_id}` and `/leaderboard`, `/leaderboard/{players}` serve the
same page (the client reads the path), rendered from index.html with every file named by its
version (gateway/client_page.py). Beside it, at the root because browsers look there: the
service worker `/sw.js` (its scope is the folder it is served from) and `/favicon.ico`. The
files themselves are under /static (gateway/static_files.py, mounted in app.py).

Every address the client draws a page at loads by itself (a reload, a new tab, a shared link):
the shapes below are those of the client's router (js/router.js, ROUTES), and
tests/browser/test_addresses.py checks that the two agree. An address of another shape, and
any other address a browser asks for as a page, gets the page with 404: the client says that
nothing is there, where a bare `{"detail": "Not Found"}` told a player nothing.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from engine.errors import ErrorCode
from gateway.client_page import WebClient
from gateway.errors import ApiError, http_error_handler
from gateway.openapi import refusals
from gateway.security_headers import content_security_policy
from gateway.static_files import REVALIDATE, file_response

FAVICON = "icons/favicon.ico"

# The shapes of js/router.js's ROUTES. A table's code as the join form sends what was typed (its
# page then says no table has it); a replay's table id; a player's id; a table size.
TABLE_CODE = re.compile(r"[A-Za-z0-9]{1,12}")
TABLE_ID = re.compile(r"[A-Za-z0-9-]{1,64}")
PLAYER_ID = re.compile(r"p-[0-9a-f]{32}")
TABLE_SIZE = re.compile(r"[468]")
# Addresses that are never a page: a miss there is the API's or a file's, answered as before.
NOT_PAGES = ("/api/", "/static/")


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

# A page's address of the wrong shape: the page itself, which says that nothing is there (or, on
# a gateway built without the web client, `not_found` as JSON).
_JSON_404 = refusals((ErrorCode.NOT_FOUND, 404))[404]
NO_PAGE: dict[int | str, dict[str, Any]] = {
    404: {
        "description": "no page at this address: the page says so (text/html); "
        + _JSON_404["description"],
        "content": {
            "application/json": {
                "schema": {"$ref": "#/components/schemas/ErrorOut"},
                **_JSON_404["content"]["application/json"],
            },
            "text/html": {"schema": {"type": "string"}},
        },
    }
}


def _client(request: Request) -> WebClient:
    client: WebClient = request.app.state.web_client
    return client


def _missing() -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, "the web client is not built in", 404)


async def _page(request: Request, status: int = 200) -> Response:
    page = _client(request).page()
    if page is None:
        raise _missing()
    csp = content_security_policy(page.script_hashes)
    return await file_response(
        page.file, request.headers, REVALIDATE, [("content-security-policy", csp)], status
    )


async def _page_if(shape: re.Pattern[str], value: str, request: Request) -> Response:
    return await _page(request, 200 if shape.fullmatch(value) else 404)


async def not_found(request: Request, exc: Exception) -> Response:
    """A 404 of no route: the page (404) to a browser asking for a page at an address where
    the client draws none; anything else, the answer it had."""
    asks_page = request.method == "GET" and "text/html" in request.headers.get("accept", "")
    if asks_page and not request.url.path.startswith(NOT_PAGES) and _client(request).page():
        return await _page(request, 404)
    return await http_error_handler(request, exc)


@router.get("/")
async def home(request: Request) -> Response:
    return await _page(request)


@router.get("/t/{code}", responses=NO_PAGE)
async def invite(code: str, request: Request) -> Response:
    """A table: its lobby, its match, or its end (1-12 letters and digits, any case)."""
    return await _page_if(TABLE_CODE, code, request)


@router.get("/replay/{table_id}", responses=NO_PAGE)
async def replay(table_id: str, request: Request) -> Response:
    """(ext) A finished table played back: the client fetches `/api/replays/{table_id}`."""
    return await _page_if(TABLE_ID, table_id, request)


@router.get("/profile")
async def own_profile(request: Request) -> Response:
    """(ext) The player's own profile: the client fetches `/api/profiles/me`."""
    return await _page(request)


@router.get("/p/{player_id}", responses=NO_PAGE)
async def profile(player_id: str, request: Request) -> Response:
    """(ext) A player's profile as others see it: the client fetches `/api/profiles/{id}`."""
    return await _page_if(PLAYER_ID, player_id, request)


@router.get("/leaderboard")
async def leaderboards(request: Request) -> Response:
    """(ext) The leaderboards, at 4 seats: the client fetches `/api/leaderboards/4`."""
    return await _page(request)


@router.get("/leaderboard/{players}", responses=NO_PAGE)
async def leaderboard(players: str, request: Request) -> Response:
    """(ext) A table size's leaderboard (4, 6 or 8): the client fetches
    `/api/leaderboards/{players}`."""
    return await _page_if(TABLE_SIZE, players, request)


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
