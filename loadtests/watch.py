"""What the soak reads of its Locust players while they play: the tables' state files
(`tables-<pid>.json`: each table's phase, last event and connected seats per gateway, rewritten
every second) and the ledger (`ledger-<pid>.jsonl`: every score a player was shown, every
welcome), both written by loadtests/locustfile.py with `--soak-dir`."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MOVING = frozenset({"signing", "playing", "pause"})  # phases whose clock moves by itself


def read_tables(folder: Path) -> dict[str, dict[str, Any]]:
    """Every table of every Locust process, as last written."""
    tables: dict[str, dict[str, Any]] = {}
    for path in folder.glob("tables-*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # being replaced: the next poll reads it
        tables.update(data.get("tables", {}))
    return tables


def read_ledger(folder: Path) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for path in folder.glob("ledger-*.jsonl"):
        with path.open(encoding="utf-8") as f:
            for line in f:
                if line.endswith("\n"):  # a line half-written is read next time
                    lines.append(json.loads(line))
    return lines


def connected(tables: dict[str, dict[str, Any]], port: str | None = None) -> int:
    """Seats connected (past welcome), through gateway `port` or through any."""
    return sum(
        n
        for t in tables.values()
        for p, n in t.get("connected", {}).items()
        if port is None or p == port
    )


def welcomes_since(folder: Path, t: float) -> int:
    return sum(1 for e in read_ledger(folder) if e["kind"] == "welcome" and e["t"] >= t)


# A table whose phase deadline passed this long ago with no event since has a clock that did
# not move (its players may well be idle before the deadline: a dead deal waits for R22).
OVERDUE_GRACE_S = 5.0


@dataclass
class Silence:
    """The longest a table stayed silent with players connected in a phase whose clock moves,
    and for how long of that its phase's deadline had already passed."""

    code: str
    phase: str
    seconds: float
    overdue_s: float
    at: float  # when it was seen


@dataclass
class StuckMonitor:
    """Polls the state files once a second (in a thread of its own) and keeps, per table, the
    longest silence seen; a table silent longer than `limit_s` is stuck."""

    folder: Path
    limit_s: float = 60.0
    worst: dict[str, Silence] = field(default_factory=dict)
    overdue: dict[str, Silence] = field(default_factory=dict)
    stuck_seen: dict[str, Silence] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> StuckMonitor:
        self._thread = threading.Thread(target=self._run, name="stuck-monitor", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def poll(self) -> None:
        now = time.time()
        for code, t in read_tables(self.folder).items():
            if not t.get("connected") or t.get("phase") not in MOVING or not t["last_event"]:
                continue
            last = float(t["last_event"])
            quiet = now - last
            due = t.get("deadline")
            overdue = 0.0 if due is None else max(0.0, now - max(last, due / 1000))
            here = Silence(code, str(t["phase"]), quiet, overdue, now)
            seen = self.worst.get(code)
            if seen is None or quiet > seen.seconds:
                self.worst[code] = here
            seen = self.overdue.get(code)
            if seen is None or overdue > seen.overdue_s:
                self.overdue[code] = here
            # Stuck: silent longer than the limit, and past its phase's deadline (plus a grace)
            # without an event: the table's own clock should have moved and did not.
            if quiet > self.limit_s and overdue > OVERDUE_GRACE_S:
                seen = self.stuck_seen.get(code)
                if seen is None or quiet > seen.seconds:
                    self.stuck_seen[code] = here

    def stuck(self) -> list[Silence]:
        return list(self.stuck_seen.values())

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self.poll()
