"""A cell lost, in figures: `python -m loadtests.cells [--tables 6]`.

Two cells on one machine (cluster/two_cells.py: one shared redis-server, two embedded Ray
clusters, a gateway homed in each); tables created one after another through cell b's gateway
and placed by free slots, with smart bots in three seats, playing until every table has scored.
The human of half the tables (in each cell) follows theirs through b's gateway; the others left
(their tables are moved by the sweep of lost cells, not by a follower). Then cell a's gateway
and whole Ray are killed (SIGKILL by PID). Printed: where the tables went, the time from the
kill to each table playing again in cell b (a new event saved there), how many moved, and what
was lost: points (scores below those saved at the kill) and events (the stored log up to the
kill changed)."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from cluster.two_cells import TwoCells
from loadtests import cli
from loadtests.player import Player, table_with

WAIT_S = 90.0


async def until(check: Any, limit: float, what: str) -> Any:
    deadline = time.monotonic() + limit
    while not (result := check()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {limit} s: {what}")
        await asyncio.sleep(0.05)
    return result


def room(cells: TwoCells) -> int:
    return sum(int(rec["free"]) for rec in cells.registry().values())


async def run(tables: int, slots: int) -> None:
    logs = Path(tempfile.mkdtemp(prefix="qcells-logs-"))
    cells = TwoCells(logs, table_slots=slots)
    started = time.monotonic()
    cells.start()
    print(
        f"two cells (a, b), {slots} table slots each, one redis-server; up in "
        f"{time.monotonic() - started:.1f} s; logs in {logs}",
        flush=True,
    )
    people: list[Player] = []
    try:
        b = cells.url("b")
        full = 2 * (slots - 1)  # each gateway keeps one pooled actor
        await until(lambda: len(cells.registry()) == 2 and room(cells) == full, 60, "both up")
        codes: list[str] = []
        unfollowed: set[str] = set()
        for n in range(tables):
            code, (host,) = await table_with(b, 4, 1, time_scale=0.05, bot_policy="smart")
            assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
            codes.append(code)
            if (n // 2) % 2 == 0:  # placements alternate: followed tables in both cells
                people.append(host)
            else:
                await host.close()
                unfollowed.add(code)
            # The next placement reads the room this one left (pools refilled, records renewed).
            await until(lambda n=n: room(cells) == full - n - 1, 60, "the registry follows")
        where = {code: cells.record(code)["cell"] for code in codes}
        placed = {c: sum(1 for v in where.values() if v == c) for c in ("a", "b")}
        print(f"tables placed by free slots: cell a {placed['a']}, cell b {placed['b']}")
        # Points on the board before the kill, so that "points lost" means something.
        await until(
            lambda: all(sum(cells.snapshot(c)["table"]["state"]["scores"]) > 0 for c in codes),
            180,
            "every table has scored",
        )
        lost_cell = [c for c in codes if where[c] == "a"]
        killed_at = time.monotonic()
        pids = cells.kill("a")
        print(f"killed cell a: its gateway and Ray, {len(pids)} processes, SIGKILL by PID")
        at_kill = {c: (cells.snapshot(c), cells.log(c)) for c in codes}
        back: dict[str, float] = {}

        def playing(code: str) -> bool:
            snap = cells.snapshot(code)
            return cells.record(code).get("cell") == "b" and snap["seq"] > at_kill[code][0]["seq"]

        deadline = time.monotonic() + WAIT_S
        while len(back) < len(codes) and time.monotonic() < deadline:
            for code in codes:
                if code not in back and playing(code):
                    back[code] = time.monotonic() - killed_at
            await asyncio.sleep(0.05)
        points_lost = events_lost = 0
        for code in codes:
            snap, log = at_kill[code]
            now_snap, now_log = cells.snapshot(code), cells.log(code)
            before = snap["table"]["state"]["scores"]
            after = now_snap["table"]["state"]["scores"]
            points_lost += sum(max(0, x - y) for x, y in zip(before, after, strict=True))
            # Every event stored at the kill is still there, unchanged (those the log's cap
            # of 256 has since let go of excepted).
            first = now_log[0][0] if now_log else 0
            stored = {e[0]: e for e in now_log}
            events_lost += sum(1 for e in log if e[0] >= first and stored.get(e[0]) != e)
            took = f"{back[code]:.1f} s" if code in back else "NOT within the wait"
            print(
                f"  table {code} (cell {where[code]}, "
                f"{'nobody there' if code in unfollowed else 'followed'}): "
                f"playing in cell b {took} after the kill; "
                f"scores {before} at the kill, {after} now; seq {snap['seq']} -> "
                f"{now_snap['seq']}"
            )
        moved = sum(1 for c in lost_cell if c in back)
        times = sorted(back[c] for c in lost_cell if c in back)
        print(f"tables moved from a to b: {moved} of {len(lost_cell)}", end="")
        if times:
            print(f"; kill -> playing again: min {times[0]:.1f} s, max {times[-1]:.1f} s", end="")
        print()
        untouched = sum(1 for c in codes if where[c] == "b" and c in back)
        print(f"tables of cell b playing on: {untouched} of {len(codes) - len(lost_cell)}")
        print(f"points lost: {points_lost}; events lost or changed: {events_lost}")
    finally:
        for p in people:
            await p.close()
        cells.stop()


def main() -> None:
    parser = cli.command("cells", __doc__)
    parser.add_argument("--tables", type=int, default=6)
    parser.add_argument("--slots", type=int, default=16, help="table slots per cell")
    args = parser.parse_args()
    asyncio.run(run(args.tables, args.slots))


if __name__ == "__main__":
    main()
