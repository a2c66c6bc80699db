"""Waiting out a fault (loadtests/faults.py): `until` a condition holds, `Answers`, when
each table actor of a lost node answered again, and `Moved`, when each table's players saw it
move again."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loadtests.watch import read_tables

POLL_S = 0.25
ANSWER_WAIT_S = 30.0  # a lost node's table actors: how long after recovery they may still answer


def until(check: Callable[[], bool], limit: float, poll_s: float = POLL_S) -> bool:
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll_s)
    return True


class Answers:
    """A Probe to the actor of each table of a lost node, sent once the node is declared dead
    (Ray then holds it until the actor is restarted), and sent again if it fails (it reached the
    old process, or an actor a gateway has since replaced: the table's actor is then looked up
    again from its record): when each table's actor answered, that is, ran elsewhere with its
    table restored."""

    def __init__(self, ray: Any, codes: list[str], lookup: Callable[[str], Any]) -> None:
        self.ray = ray
        self.codes = codes
        self.lookup = lookup
        self.refs: dict[str, Any] = {}
        self.at: dict[str, float] = {}

    def poll(self) -> None:
        from actors.protocol import Probe
        from actors.ray_calls import send

        for code in self.codes:
            if code in self.at:
                continue
            ref = self.refs.get(code)
            if ref is not None:
                ready, _ = self.ray.wait([ref], timeout=0)
                if not ready:
                    continue
                try:
                    self.ray.get(ref)
                    self.at[code] = time.time()
                    continue
                except Exception:
                    pass
            with contextlib.suppress(Exception):  # asked again at the next poll
                self.refs[code] = send(self.lookup(code), Probe())

    def last(self, limit: float) -> float | None:
        """When the last of them answered (waiting up to `limit` for those not yet seen);
        None if one never did."""
        deadline = time.monotonic() + limit
        while len(self.at) < len(self.codes) and time.monotonic() < deadline:
            self.poll()
            time.sleep(0.05)
        if len(self.at) < len(self.codes):
            return None
        return max(self.at.values(), default=time.time())


class Moved:
    """When each table of `codes` first showed its players an event that happened after
    `since_ms` (the players' state files, loadtests/watch.py): `check` is true once all did."""

    def __init__(self, folder: Path, codes: list[str], since_ms: int) -> None:
        self.folder = folder
        self.codes = codes
        self.since_ms = since_ms
        self.at: dict[str, float] = {}

    def check(self) -> bool:
        tables = read_tables(self.folder)
        now = time.time()
        for code in self.codes:
            if code not in self.at and int(tables.get(code, {}).get("last_at", 0)) > self.since_ms:
                self.at[code] = now
        return len(self.at) == len(self.codes)


def per_table(start: float, answers: Answers, moved: Moved) -> dict[str, list[float | None]]:
    """Each table's [answering_s, moving_s] from `start`: its actor answered again, its players
    saw it move (None: not seen)."""

    def since(t: float | None) -> float | None:
        return None if t is None else round(t - start, 2)

    return {c: [since(answers.at.get(c)), since(moved.at.get(c))] for c in answers.codes}
