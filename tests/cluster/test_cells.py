"""Cells, the proof on one machine (issue 23, docs/scaling.md): one shared redis-server, two
embedded Ray clusters (cells a and b), a gateway homed in each. New tables go to the cell with
the most free slots (a tie to the creating gateway's own); a table is played through either
gateway; cell a's Ray and gateway are killed hard, and its tables are restored in cell b and
play on through b's gateway with scores, hands, round and events intact, their players back
in their seats by session."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors import keys
from cluster.two_cells import TwoCells
from gateway.cells import AUTH_HEADER, signed
from tests.cluster.client import Frame, Player, table_with
from tests.cluster.test_match import play_match
from tests.cluster.test_resilience import open_round
from tests.cluster.test_restore import until

SLOTS = 16
RENEWAL_MARGIN_MS = 100  # a renewal puts back up to PUBLISH_S (1 s) of TTL; reads differ by ms
MOVE_LIMIT_S = 60.0  # kill -> playing again in cell b: registry TTL 5 s + an actor start


@pytest.fixture
def cells(tmp_path: Path) -> Iterator[TwoCells]:
    two = TwoCells(tmp_path, table_slots=SLOTS)
    try:
        yield two.start()
    finally:
        two.stop()


def free(cells: TwoCells) -> dict[str, int]:
    return {name: int(rec["free"]) for name, rec in cells.registry().items()}


async def settled(cells: TwoCells, what: str, check: Callable[[dict[str, int]], bool]) -> None:
    """Both cells published, their pools full, and `check` true of their free slots, the same
    again once both records were renewed since: a pool refilling, or Ray's view of the slots
    lagging a creation, moves the free slots under a placement read too early."""
    store = cells.store()

    def steady() -> dict[str, int] | None:
        f = free(cells)
        pools_full = all(store.llen(keys.pool(name)) >= 1 for name in ("a", "b"))
        return f if len(f) == 2 and pools_full and check(f) else None

    def renewed(since: dict[str, int]) -> Callable[[], bool]:
        """Whether both records were renewed since `since` (their PTTL then): a record left
        alone only counts down, so a TTL above what the time since predicts is a renewal (a
        bare "higher than then" missed a record read just after a renewal)."""
        t0 = time.monotonic()

        def check() -> bool:
            decayed_ms = (time.monotonic() - t0) * 1000
            return all(
                int(store.pttl(keys.cell(n))) > since[n] - decayed_ms + RENEWAL_MARGIN_MS
                for n in since
            )

        return check

    try:
        for _ in range(30):
            first = await until(steady, 60, what)
            ttl = {n: int(store.pttl(keys.cell(n))) for n in ("a", "b")}
            await until(renewed(ttl), 10, f"{what}: both records renewed")
            if steady() == first:
                return
        raise AssertionError(f"never steady: {what}")
    finally:
        store.close()


async def reconnect(player: Player, code: str, base: str, limit: float) -> Frame:
    """Say hello again (by session) until welcomed: the first hello may wait out the move."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        try:
            return await player.connect(code, base)
        except (AssertionError, OSError, TimeoutError):
            if loop.time() > deadline:
                raise


def kind(entry: list[Any]) -> str:
    """The event type of a stored log entry."""
    return next(str(v["type"]) for v in entry if isinstance(v, dict) and "type" in v)


async def first_event_after(player: Player, seq: int, limit: float) -> Frame:
    return await player.wait_event(lambda e: True, limit=limit, after=seq)


async def probe_the_cell_routes(cells: TwoCells, code_of_a: str) -> None:
    """The real servers, as another host would try them: cell b's internal port refuses a call
    unsigned or signed with another secret, and refuses (409) a table of cell a even signed
    right, rather than pass it on; the public port has no cell route at all."""
    internal = f"http://{cells.registry()['b']['internal']}"
    secret = cells.secret()
    body = json.dumps({"code": code_of_a, "method": "endpoint", "args": []}).encode()
    path = "/cells/call"

    def headers(key: str) -> dict[str, str]:
        return {AUTH_HEADER: signed(key, path, body), "Content-Type": "application/json"}

    async with httpx.AsyncClient(timeout=10) as c:
        r = await c.post(internal + path, json=json.loads(body))  # no signature at all
        assert r.status_code == 403, r.text
        huge = json.dumps({"code": "X", "method": "endpoint", "args": ["x" * 200_000]})
        r = await c.post(internal + path, content=huge, headers=headers(secret))
        assert r.status_code == 413, r.text  # read no further than the public port would
        r = await c.post(internal + path, content=body, headers=headers("not-the-fleet's"))
        assert r.status_code == 403, r.text
        r = await c.post(internal + path, content=body, headers=headers(secret))
        assert r.status_code == 409, r.text  # a's table: b answers for its own Ray only
        r = await c.post(cells.url("b") + path, content=body, headers=headers(secret))
        assert r.status_code in (404, 405), r.text  # never on the public port


async def test_a_lost_cells_tables_play_on_in_the_other(cells: TwoCells) -> None:
    a, b = cells.url("a"), cells.url("b")
    # Placement. Equal room: a table goes to the creating gateway's own cell.
    await settled(cells, "both cells publish equal room", lambda f: f["a"] == f["b"])
    code3, people3 = await table_with(a, 4, 2, deals=1, time_scale=1.0)
    assert cells.record(code3)["cell"] == "a"
    await probe_the_cell_routes(cells, code3)
    # Cell a has less room now: a's gateway places the next table in b, where b's gateway
    # opens it (a creation for another cell is done by a gateway of that cell).
    await settled(cells, "cell a has less room", lambda f: f["a"] < f["b"])
    code2, (host2, partner2) = await table_with(a, 4, 2, time_scale=0.02, bot_policy="smart")
    assert cells.record(code2)["cell"] == "b"
    await settled(cells, "equal room again", lambda f: f["a"] == f["b"])
    code1, _ = await table_with(b, 4, 1, time_scale=0.05, bot_policy="smart")
    assert cells.record(code1)["cell"] == "b"  # a tie, through b: b
    # (Both cells got tables; one more in a, so that a's loss takes two.)
    await settled(cells, "cell b has less room", lambda f: f["b"] < f["a"])
    code4, (host4, partner4) = await table_with(b, 4, 2, time_scale=0.05, bot_policy="smart")
    assert cells.record(code4)["cell"] == "a"
    # And a table of a that nobody follows: its host left, smart bots play on by themselves.
    await settled(cells, "equal room, last", lambda f: f["a"] == f["b"])
    code5, (host5,) = await table_with(a, 4, 1, time_scale=0.5, bot_policy="smart")
    assert cells.record(code5)["cell"] == "a"
    assert (await host5.rest("POST", f"/api/tables/{code5}/start")).is_success
    await host5.close()

    # A match in cell b, played through cell a's gateway.
    assert (await host2.rest("POST", f"/api/tables/{code2}/start")).is_success
    over2 = await play_match(host2, partner2)
    assert max(over2["scores"]) == 5  # type: ignore[call-overload]

    # Cell a's tables: one mid-round with nothing moving by itself (idle bots, slow clock),
    # played through a's gateway; one mid-match with smart bots, through b's gateway.
    rounds3 = await open_round(code3, people3)
    host3, other3 = people3
    mine = rounds3[0]
    await host3.ok("swap", card=mine["hand"][0]["id"], slot=0, expect=mine["center"][0]["id"])
    await other3.wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 0)
    assert (await host4.rest("POST", f"/api/tables/{code4}/start")).is_success
    await host4.wait_event(lambda e: e["type"] == "round")
    seen3 = {p.seat: (await p.rest("GET", f"/api/tables/{code3}")).json() for p in people3}
    welcome3 = {p.seat: await p.connect(code3, a) for p in people3}  # what each sees now
    saved3, log3 = cells.snapshot(code3), cells.log(code3)

    # Cell a lost: its gateway and its whole Ray, SIGKILL by PID.
    loop = asyncio.get_running_loop()
    killed = loop.time()
    cells.kill("a")
    last4, saved4 = host4.last_seq, cells.snapshot(code4)  # all that cell a ever saved of it

    saved5, saved_log5 = cells.snapshot(code5), cells.log(code5)

    # The table followed through b plays on, its players' sockets untouched: the next event
    # continues their numbering, with no gap and nothing twice (Player.problems).
    await until(
        lambda: cells.snapshot(code4)["seq"] > saved4["seq"], MOVE_LIMIT_S, "table 4 plays on"
    )
    moved4 = loop.time() - killed
    await first_event_after(host4, last4, 15)
    assert cells.record(code4)["cell"] == "b"
    over4 = await play_match(host4, partner4)
    assert max(over4["scores"]) == 5  # type: ignore[call-overload]
    for p in (host4, partner4):
        assert not p.problems, p.problems

    # The table whose gateway died with its cell: its players come back to b by session, to
    # their seats, and find it exactly as they left it.
    assert "a" not in cells.registry()
    back = {p.seat: await reconnect(p, code3, b, MOVE_LIMIT_S) for p in people3}
    moved3 = loop.time() - killed
    assert cells.record(code3)["cell"] == "b"
    # Not one event lost or changed: the log goes on from the same events, and what came since
    # is the time the table stood still given back to its round (`resumed`: docs/rules.md,
    # R22's decision) and their seats changing connection: the close order of each one's old
    # connection (its hello replaced it) and the seat's presence (they did nothing else).
    after3 = cells.log(code3)
    assert [e for e in after3 if e[0] <= saved3["seq"]] == log3
    assert {kind(e) for e in after3 if e[0] > saved3["seq"]} <= {"_close", "seat", "resumed"}
    given_back = sum(
        int(v["shift"])
        for e in after3
        if e[0] > saved3["seq"] and kind(e) == "resumed"
        for v in e
        if isinstance(v, dict) and v.get("type") == "resumed"
    )
    for seat, welcome in back.items():
        before, now = welcome3[seat]["table"], welcome["table"]
        assert welcome["you"]["seat"] == seat
        for key in ("hand", "center", "scores", "round", "phase", "sign"):
            assert now[key] == before[key], (seat, key, before[key], now[key])
        assert now["deadline"] == before["deadline"] + given_back, (seat, given_back)
        assert seen3[seat]["scores"] == now["scores"]
    # And play resumes there.
    hand = back[1]["table"]["hand"]
    center = back[1]["table"]["center"]
    await other3.ok("swap", card=hand[0]["id"], slot=1, expect=center[1]["id"])
    await host3.wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 1)
    assert cells.snapshot(code3)["seq"] > saved3["seq"]
    # The table nobody asked for was swept into b by its gateway, and its bots play on there.
    await until(
        lambda: (
            cells.record(code5).get("cell") == "b" and cells.snapshot(code5)["seq"] > saved5["seq"]
        ),
        MOVE_LIMIT_S,
        "the unfollowed table is moved and plays on",
    )
    moved5 = loop.time() - killed
    kept5 = [e for e in cells.log(code5) if e[0] <= saved5["seq"]]
    assert kept5 == [e for e in saved_log5 if e[0] >= (kept5[0][0] if kept5 else 0)]
    for p in [*people3, host4, partner4, host2, partner2]:
        await p.close()
    print(
        f"cells: kill -> playing again in b: {moved4:.1f} s (followed), {moved3:.1f} s "
        f"(rejoined), {moved5:.1f} s (nobody there: swept)"
    )
