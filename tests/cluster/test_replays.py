"""Replays (issue 13, part 3): a finished table's events served at `GET /api/replays/{table_id}`.
Replaying a recorded bot match reproduces every score and reveal seen live; the public replay is
what a spectator saw and holds no hand before a reveal, a player's own view only what reached
that player (R30); a match under way is never served; a restarted actor appends nothing twice."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from typing import Any

import redis

from actors import keys
from tests.cluster.client import Frame, Player, table_with
from tests.cluster.test_match import play_match
from tests.cluster.test_resilience import actor_pid
from tests.conftest import Stack

FIGURES: dict[str, int] = {}


def store(stack: Stack) -> redis.Redis:
    return redis.Redis.from_url(stack.redis.url, decode_responses=True)


def replay_key(stack: Stack, table_id: str) -> str:
    """The replay's list: in its table's slot, whose code the actor's record names."""
    return keys.replay(str(store(stack).get(keys.actor(table_id))), table_id)


def stored(stack: Stack, table_id: str) -> list[list[Any]]:
    """The replay's raw entries in Redis: [seq, scope, index, wire, at, origin, holders]."""
    return [json.loads(x) for x in store(stack).lrange(replay_key(stack, table_id), 0, -1)]


def live(events: list[Frame]) -> list[Frame]:
    """A connection's events as a replay holds them: no `welcome`, no per-connection `seq`, and
    no `ratings` (told after a match, not part of its play: actors/replay.py)."""
    return [
        {k: v for k, v in e.items() if k != "seq"}
        for e in events
        if e["type"] not in ("welcome", "ratings")
    ]


def contains_run(whole: list[Frame], part: list[Frame]) -> bool:
    """Whether `part` appears in `whole` as one unbroken run, in order."""
    return any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))


def fold(events: list[Frame], start: dict[str, Any]) -> list[list[int]]:
    """The replay's own reducer, in small: the scores after each reveal, worked out from the
    teams each reveal says scored (one point each, R26), not copied from its `scores`."""
    scores = list(start["scores"])
    after: list[list[int]] = []
    for ev in events:
        if ev["type"] == "signing" and ev["round"] == 1:
            scores = [0] * len(scores)
        if ev["type"] == "reveal":
            for team in ev["scored"]:
                scores[team] += 1
            after.append(list(scores))
        if ev["type"] == "over":
            assert ev["scores"] == scores
    return after


async def test_replaying_a_bot_match_reproduces_every_score_and_reveal(stack: Stack) -> None:
    code, (host, partner) = await table_with(stack.a.url, 4, 2, time_scale=0.02, bot_policy="smart")
    watcher = await Player(stack.b.url, "Watcher").register()
    stranger = await Player(stack.b.url, "Stranger").register()
    try:
        table_id = host.welcome["table"]["table_id"] if host.welcome else ""
        assert table_id.startswith("table-")
        await watcher.connect(code, watch=True)
        assert watcher.welcome is not None
        assert watcher.welcome["table"]["table_id"] == table_id
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        # Before the first `over` nothing is served, in either view.
        early = await watcher.rest("GET", f"/api/replays/{table_id}")
        assert early.status_code == 409
        assert early.json()["error"]["code"] == "not_finished"
        early = await host.rest("GET", f"/api/replays/{table_id}?view=own")
        assert early.status_code == 409, early.text
        over = await play_match(host, partner)
        await watcher.wait_event(lambda e: e["type"] == "over")
        await partner.wait_event(lambda e: e["type"] == "over")
        # The match's ratings come after its end, into the stored log too (not into the
        # replay's answer): once told, the log no longer grows, and a kept answer holds.
        await host.wait_event(lambda e: e["type"] == "ratings")

        r = await stranger.rest("GET", f"/api/replays/{table_id}")
        assert r.status_code == 200, r.text
        public = r.json()
        assert public["view"] == "public"
        assert public["seat"] is None
        assert public["code"] == code
        assert public["players"] == 4
        assert [(m["first"], m["last"]) for m in public["matches"]] == [
            (0, len(public["events"]) - 1)
        ]
        events = public["events"]
        # Asked again, the answer is the gateway's kept one while the log keeps its length: an
        # entry rewritten in place (never done by the table, which only appends) goes unseen.
        key = replay_key(stack, table_id)
        first = str(store(stack).lindex(key, 0))
        store(stack).lset(key, 0, first.replace('"type"', '"kind"', 1))
        try:
            again = await stranger.rest("GET", f"/api/replays/{table_id}")
            assert again.json() == public
        finally:
            store(stack).lset(key, 0, first)
        # Every score and every reveal of the live match, in order, and the same events a
        # spectator got live (one unbroken run: the replay also holds what came before).
        host_reveals = [e for e in live(host.events) if e["type"] == "reveal"]
        assert [e for e in events if e["type"] == "reveal"] == host_reveals
        assert fold(events, public["start"]) == [e["scores"] for e in host_reveals]
        assert events[-1] == {k: v for k, v in over.items() if k != "seq"}
        assert contains_run(events, live(watcher.events))
        # R30: no hand and no sign in the public replay before a reveal.
        assert not [e for e in events if e["type"] == "sign"]
        dealt = [e for e in events if e["type"] in ("round", "reshuffled")]
        assert dealt
        assert all(e["hand"] == [] for e in dealt)

        # Each player's own view: exactly what reached them live, their hands and sign.
        for p in (host, partner):
            r = await p.rest("GET", f"/api/replays/{table_id}?view=own")
            assert r.status_code == 200, r.text
            own = r.json()
            assert own["view"] == "own"
            assert own["seat"] == p.seat
            assert contains_run(own["events"], live(p.events)), p.name
            assert [e for e in own["events"] if e["type"] == "reveal"] == host_reveals
            mine = [e for e in own["events"] if e["type"] == "round"]
            assert mine == [e for e in live(p.events) if e["type"] == "round"]
            assert all(len(e["hand"]) == 4 for e in mine)
        # ... and never an entry that did not name them, checked against the raw log.
        raw = stored(stack, table_id)
        cut = max(i for i, e in enumerate(raw) if e[3]["type"] == "over") + 1
        for p in (host, partner):
            own = (await p.rest("GET", f"/api/replays/{table_id}?view=own")).json()["events"]
            private = [e for e in raw[:cut] if e[1] not in ("all", "watch")]
            theirs = [{**e[3], "at": e[4]} for e in private if p.player_id in e[6]]
            others = [{**e[3], "at": e[4]} for e in private if p.player_id not in e[6]]
            assert theirs
            assert others
            assert [e for e in own if e["type"] in ("round", "reshuffled", "sign")] == theirs
            assert not [e for e in others if e in own]
        # Neither a watcher nor a stranger has an own view; without a session, 401.
        r = await watcher.rest("GET", f"/api/replays/{table_id}?view=own")
        assert r.status_code == 403
        assert r.json()["error"]["code"] == "no_seat"
        anonymous = Player(stack.a.url, "Anon")
        r = await anonymous.rest("GET", f"/api/replays/{table_id}?view=own")
        assert r.status_code == 401
        for bad in ("table-000000000000", "nope", "table-zz"):
            r = await anonymous.rest("GET", f"/api/replays/{bad}")
            assert r.status_code == 404, bad
            assert r.json()["error"]["code"] == "unknown_replay", bad

        # A rematch under way is not served: the replay still ends at the first `over`.
        assert (await host.rest("POST", f"/api/tables/{code}/rematch")).is_success
        ended = host.latest("over")
        assert ended is not None
        await host.wait_event(lambda e: e["type"] == "signing", after=ended["seq"])
        again = (await host.rest("GET", f"/api/replays/{table_id}?view=own")).json()
        assert again["events"][-1]["type"] == "over"
        assert len(again["matches"]) == 1
        assert len(stored(stack, table_id)) > cut  # the new match is recorded, not served
        # Kept a week (QUATRO_REPLAY_TTL), past the table's own records (a day).
        ttl = store(stack).ttl(replay_key(stack, table_id))
        assert 6 * 24 * 3600 < ttl <= 7 * 24 * 3600
        assert store(stack).ttl(keys.snapshot(code)) <= 24 * 3600
        FIGURES.update(
            events_public=len(events),
            events_stored=cut,
            reveals=len(host_reveals),
            bytes_public=len(json.dumps(public)),
        )
        print(f"replay figures: {json.dumps(FIGURES)}")
        for p in (host, partner, watcher):
            assert not p.problems

        # The host closes the table to watchers during the rematch: nothing changes while it is
        # under way; once it ends, the table has no public replay, and its players keep theirs.
        closing = {"watchers": False}
        r = await host.rest("PATCH", f"/api/tables/{code}/settings", json=closing)
        assert r.status_code == 200, r.text
        assert (await stranger.rest("GET", f"/api/replays/{table_id}")).status_code == 200
        await play_match(host, partner)
        r = await stranger.rest("GET", f"/api/replays/{table_id}")
        assert r.status_code == 403, r.text
        assert r.json()["error"]["code"] == "watching_off"
        r = await partner.rest("GET", f"/api/replays/{table_id}?view=own")
        assert r.status_code == 200, r.text
        assert len(r.json()["matches"]) == 2
    finally:
        for p in (host, partner, watcher):
            await p.close()


async def test_a_restarted_actor_appends_nothing_twice(stack: Stack) -> None:
    code, (host,) = await table_with(stack.a.url, 4, 1, time_scale=0.1, bot_policy="smart")
    table_id = host.welcome["table"]["table_id"] if host.welcome else ""
    assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
    await host.wait_event(lambda e: e["type"] == "signing")
    await host.ok("ready")
    await host.wait_event(lambda e: e["type"] == "round")
    os.kill(actor_pid(stack, code), signal.SIGKILL)
    # The table comes back from its snapshot and plays on; the host ends the match.
    seen = host.last_seq
    async with asyncio.timeout(120):
        while True:
            e = await host.wait_event(
                lambda e: e["type"] in ("signing", "round", "pause", "over", "welcome"),
                after=seen,
                limit=60,
            )
            seen = e["seq"]
            if e["type"] == "over":
                break
            kind = {"signing": "ready", "round": "quatro", "pause": "next_round"}.get(e["type"])
            if kind:
                await host.request(kind)
    seqs = [e[0] for e in stored(stack, table_id)]
    assert seqs == sorted(set(seqs)), "an event was stored twice or out of order"
    r = await host.rest("GET", f"/api/replays/{table_id}")
    assert r.status_code == 200, r.text
    reveals = [e for e in r.json()["events"] if e["type"] == "reveal"]
    assert [e["scores"] for e in reveals][-1] == host.latest("over")["scores"]  # type: ignore[index]
    await host.close()
