"""What the soak (loadtests/soak.py) reads of the players and tells them (`--soak-dir`)."""

from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import gevent

from engine.phase import Phase


class Seated(Protocol):
    """A user as the board counts it: its table, its gateway's port, whether it is connected."""

    code: str

    @property
    def port(self) -> str: ...

    @property
    def connected(self) -> bool: ...


@dataclass
class TableWatch:
    """What this process's users saw of one table lately."""

    phase: str = "lobby"
    last_event: float = 0.0  # time.time() of the last event any of its users received
    last_at: int = 0  # the latest `at` (the table's own clock, ms) among those events
    deadline: int | None = None  # when the phase's clock is due to move (server ms)


class SoakBoard:
    """The soak's view of this process (`--soak-dir`): every score its users were shown
    (ledger-<pid>.jsonl: welcomes, reveals, overs and match starts, with the table's `at`), each
    table's last event and how many of its seats are connected through which gateway
    (tables-<pid>.json, rewritten every second), and the soak's orders (control.json: a
    reconnect storm `{"storm": {"id", "port", "within"}}`)."""

    def __init__(self) -> None:
        self.dir: Path | None = None  # no --soak-dir: nothing written or read
        self.lines: list[str] = []
        self.tables: dict[str, TableWatch] = {}
        self.users: set[Seated] = set()
        self.storm: tuple[int, str, float] = (0, "", 0.0)  # id, port, within (s)
        self._runner: Any = None

    def configure(self, directory: str) -> None:
        self.dir = Path(directory) if directory else None

    def start(self) -> None:
        if self.dir is None or self._runner is not None:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        self._runner = gevent.spawn(self._run)

    def note(self, code: str, seat: int, kind: str, e: dict[str, Any], **extra: Any) -> None:
        if self.dir is None:
            return
        line = {"t": round(time.time(), 3), "code": code, "seat": seat, "kind": kind}
        line["at"] = int(e.get("at") or 0)
        line.update(extra)
        self.lines.append(json.dumps(line, separators=(",", ":")) + "\n")

    def event(self, code: str, phase: Phase, e: dict[str, Any]) -> None:
        if self.dir is None:
            return
        w = self.tables.setdefault(code, TableWatch())
        w.phase = str(phase)
        w.last_event = time.time()
        w.last_at = max(w.last_at, int(e.get("at") or 0))
        kind = e.get("type")
        if kind == "welcome":
            w.deadline = e["table"].get("deadline")
        elif kind in ("signing", "round", "pause", "resumed"):
            # `resumed`: the table stood still and its clocks moved on (docs/rules.md, R22).
            w.deadline = e.get("deadline")
        elif kind == "over":
            w.deadline = None

    def flush(self) -> None:
        if self.dir is None:
            return
        if self.lines:
            lines, self.lines = self.lines, []
            with (self.dir / f"ledger-{os.getpid()}.jsonl").open("a", encoding="utf-8") as f:
                f.writelines(lines)
        connected: dict[str, dict[str, int]] = {}
        for u in self.users:
            if u.connected and u.code:
                ports = connected.setdefault(u.code, {})
                ports[u.port] = ports.get(u.port, 0) + 1
        state = {
            "t": time.time(),
            "tables": {
                code: {
                    "phase": w.phase,
                    "last_event": w.last_event,
                    "last_at": w.last_at,
                    "deadline": w.deadline,
                    "connected": connected.get(code, {}),
                }
                for code, w in self.tables.items()
            },
        }
        path = self.dir / f"tables-{os.getpid()}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(path)

    def _read_control(self) -> None:
        assert self.dir is not None
        try:
            data = json.loads((self.dir / "control.json").read_text())
        except (OSError, ValueError):
            return
        storm = data.get("storm") or {}
        if int(storm.get("id", 0)) > self.storm[0]:
            self.storm = (int(storm["id"]), str(storm["port"]), float(storm.get("within", 2.0)))

    def _run(self) -> None:
        while True:
            gevent.sleep(0.5)
            self._read_control()
            self.flush()


SOAK = SoakBoard()  # this process's: configured at Locust's init
HOST_TURN = itertools.count()  # which of `--hosts` the next user starts on
