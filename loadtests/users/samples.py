"""The raw samples of one Locust process, for the plots and the capacity steps: every request
event and a few gauges, appended to `samples-<pid>.csv` in `--samples-dir`, and the lag of its
own event loop."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import gevent

from loadtests.users.tables import LOBBY, SEEN

FLUSH_EVERY_S = 1.0
GAUGE_EVERY_S = 2.0
LAG_TICK_S = 0.05  # the loop-lag probe sleeps this long and records how late it woke


class Samples:
    """Every request event and a few gauges, appended to one CSV per process:
    `t (epoch s), kind (WS/REFUSED/POST/…/LAG/gauge:<pid>), name, value (ms or count), failed
    (0/1), since` — `since`: when the sample's table went into play (epoch s; empty before, or
    for what no table owns)."""

    def __init__(self) -> None:
        self.path: Path | None = None  # nowhere (the master, or no --samples-dir): kept nothing
        self.buf: list[str] = []
        self._flusher: Any = None
        self._lag: Any = None

    def configure(self, directory: str) -> None:
        self.path = Path(directory) / f"samples-{os.getpid()}.csv" if directory else None

    def start(self) -> None:
        if self.path is None or self._flusher is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._flusher = gevent.spawn(self._run)
        self._lag = gevent.spawn(self._probe_lag)

    def add(
        self, kind: str, name: str, value: float, failed: bool, since: float | None = None
    ) -> None:
        if self.path is not None:
            tail = "" if since is None else f"{since:.3f}"
            self.buf.append(f"{time.time():.3f},{kind},{name},{value:.2f},{int(failed)},{tail}\n")

    def _probe_lag(self) -> None:
        """How late this process's event loop wakes a greenlet: every latency measured here
        includes that much of the generator's own delay, which no player would see."""
        while True:
            asked = time.perf_counter()
            gevent.sleep(LAG_TICK_S)
            late = (time.perf_counter() - asked - LAG_TICK_S) * 1000
            self.add("LAG", "loop", max(0.0, late), False)

    def flush(self) -> None:
        if self.path is None or not self.buf:
            return
        lines, self.buf = self.buf, []
        with self.path.open("a", encoding="utf-8") as f:
            f.writelines(lines)

    def _run(self) -> None:
        last_gauge = 0.0
        while True:
            gevent.sleep(FLUSH_EVERY_S)
            t = time.monotonic()
            if t - last_gauge >= GAUGE_EVERY_S:
                last_gauge = t
                kind = f"gauge:{os.getpid()}"
                self.add(kind, "tables_live", LOBBY.live_tables(), False)
                self.add(kind, "players_connected", LOBBY.connected, False)
                SEEN.expire()
            self.flush()


SAMPLES = Samples()  # this process's: configured at Locust's init
