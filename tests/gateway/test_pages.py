"""The page at every address the web client draws one, and 404 elsewhere (issue 46, point 4):
`/leaderboard` reloaded answered `{"detail": "Not Found"}`. Read without a server: the
gateway's page routes and its answer to an address of no route (gateway/routes/pages.py).
tests/browser/test_addresses.py walks the same addresses in Chromium and checks that the
client's router agrees with the shapes here."""

from __future__ import annotations

import warnings

import pytest
from fastapi import FastAPI

from gateway.app import add_web_client

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

BROWSER = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
PLAYER = "p-" + "0123456789abcdef" * 2

# Every address of js/router.js's ROUTES, in each shape it takes.
PAGES = [
    "/",
    "/t/K7MX2Q",
    "/t/k7mx2q",
    "/t/AB",
    "/replay/table-3f9c0a1b2c3d",
    "/profile",
    f"/p/{PLAYER}",
    "/leaderboard",
    "/leaderboard/4",
    "/leaderboard/6",
    "/leaderboard/8",
]
# Addresses where the client draws nothing: a wrong shape of a page's, or no page at all.
NOWHERE = [
    "/t/K7MX2Q-Z",
    "/t/ABCDEFGHIJKLM",
    "/replay/table_3f9c",
    "/p/p-0123",
    f"/p/{PLAYER.upper()}",
    "/leaderboard/5",
    "/leaderboard/four",
    "/leaderboards",
    "/nowhere",
    "/profile/settings",
]


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()
    add_web_client(app)
    return TestClient(app)


@pytest.mark.parametrize("path", PAGES)
def test_every_address_of_the_client_is_its_page(client: TestClient, path: str) -> None:
    r = client.get(path, headers=BROWSER)
    assert r.status_code == 200, path
    assert r.headers["content-type"].startswith("text/html")
    assert '<div id="app">' in r.text
    assert r.headers["etag"]
    again = client.get(path, headers={**BROWSER, "if-none-match": r.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize("path", NOWHERE)
def test_an_address_of_no_page_is_the_page_with_404(client: TestClient, path: str) -> None:
    r = client.get(path, headers=BROWSER)
    assert r.status_code == 404, path
    assert r.headers["content-type"].startswith("text/html")
    assert '<div id="app">' in r.text
    assert "etag" not in r.headers  # nothing to keep: it is not this address's resource
    assert r.headers["content-security-policy"]


def test_a_miss_that_is_not_a_browsers_page_keeps_its_answer(client: TestClient) -> None:
    # The API and the client's files are never a page, whoever asks.
    for path in ("/api/nothing", "/static/js/nothing.js"):
        r = client.get(path, headers=BROWSER)
        assert r.status_code == 404, path
        assert not r.headers["content-type"].startswith("text/html"), path
    # A client that does not ask for HTML gets the JSON it always had.
    r = client.get("/nowhere", headers={"accept": "application/json"})
    assert (r.status_code, r.json()) == (404, {"detail": "Not Found"})
    assert client.post("/nowhere", headers=BROWSER).status_code == 404
