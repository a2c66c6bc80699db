"""A finished match of smart bots, for the tests of what a match leaves behind: its end-of-match
screen and its replay (test_replay, test_replay_layout, test_app_shell). One per session serves
them all (`finished_match`, tests/browser/conftest.py): a match is half a minute of the bots'
play, and these tests only read it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class FinishedMatch:
    session: dict[str, Any]  # its host's (the three others are bots)
    code: str
    table_id: str


def finished_bot_match(base: str, watchers: bool = True) -> tuple[dict[str, Any], str, str]:
    """A 4-seat table, its host and three smart bots, played to its end on a fast clock with
    nobody at the keyboard (deals, signs and pauses run on their deadlines). Returns the host's
    session, the table's code and its id."""
    with httpx.Client(base_url=base, timeout=30) as c:
        session = c.post("/api/sessions", json={"name": "Ana"}).json()
        auth = {"Authorization": f"Bearer {session['token']}"}
        scenario = {"seed": 11, "time_scale": 0.02, "bot_policy": "smart"}
        # Named: a new player's table would start at relaxed (gateway/newcomers.py).
        body = {"players": 4, "scenario": scenario, "bot_level": "normal"}
        r = c.post("/api/tables", json=body, headers=auth)
        assert r.status_code == 201, r.text
        code, table_id = r.json()["code"], r.json()["table_id"]
        for seat in (1, 2, 3):
            assert c.post(f"/api/tables/{code}/bots", json={"seat": seat}, headers=auth).is_success
        if not watchers:
            closing = {"watchers": False}
            r = c.patch(f"/api/tables/{code}/settings", json=closing, headers=auth)
            assert r.is_success, r.text
        assert c.post(f"/api/tables/{code}/start", headers=auth).is_success
        deadline = time.monotonic() + 120
        while c.get(f"/api/tables/{code}").json()["phase"] != "over":
            assert time.monotonic() < deadline, "the bot match did not end within 120 s"
            time.sleep(0.5)
    return session, code, table_id
