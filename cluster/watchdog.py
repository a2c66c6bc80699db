"""The watchdog of a `make run`: a small process that stops everything the run started once its
launcher is gone, however it went (SIGKILL of `make run`'s process group, a crash, the OOM
killer).

Why a process of its own, and why this way:
- PR_SET_PDEATHSIG (cluster/procs.py) only reaches the launcher's direct children, and
  `ray start --block` does not pass it on: its GCS, raylet, agents and workers, in a session of
  their own, were seen to outlive a SIGKILLed launcher.
- The watchdog is started in a session of its own, so a signal to `make run`'s process group
  does not reach it, and without the parent-death signal, so it outlives the launcher.
- It learns of the launcher's death from a pipe: it reads the pipe's only reading end, the
  launcher holds its only writing end (not inherited by any other child: Python's fds are
  close-on-exec and subprocess closes the rest). The kernel closes that end when the launcher
  dies, by any signal, so the watchdog reads EOF at once: no polling, no PID that could be
  reused. A launcher that stops normally writes "stand down" first, and the watchdog leaves.
- Over the same pipe the launcher sends its RunRecord (cluster/leftovers.py) as JSON lines, each
  time it grows (a Ray node started); the last one is what the watchdog stops.

Run as `python -m cluster.watchdog` by `Watchdog.start()`; it imports nothing of Ray.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from cluster.leftovers import RunRecord, stop_run

STAND_DOWN = "stand down"
ROOT = Path(__file__).resolve().parents[1]


class Watchdog:
    """The launcher's side: start the watchdog, keep it informed, stand it down at a clean stop."""

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        self.proc: subprocess.Popen[bytes] | None = None
        self._pipe: IO[str] | None = None

    def start(self) -> Watchdog:
        read_end, write_end = os.pipe()
        env = dict(os.environ)
        # Not under the run's interposer (it would mark the watchdog as one of the run's Ray
        # processes), and able to import this package from anywhere.
        env.pop("LD_PRELOAD", None)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cluster.watchdog"],
                stdin=read_end,
                cwd="/",  # holds no directory of the run
                env=env,
                start_new_session=True,  # out of reach of a signal to `make run`'s group
            )
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)  # the watchdog's alone now: EOF comes when write_end closes
        self._pipe = os.fdopen(write_end, "w")
        self.update()
        return self

    def update(self) -> None:
        """Send the record as it is now."""
        self._send(self.record.to_json())

    def stand_down(self, timeout: float = 10.0) -> None:
        """The launcher stopped everything itself: the watchdog must not touch what a next run
        on the same data dir starts."""
        self._send(STAND_DOWN)
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                self._pipe.close()
            self._pipe = None
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
            self.proc = None

    def _send(self, line: str) -> None:
        if self._pipe is None:
            return
        try:
            self._pipe.write(line + "\n")
            self._pipe.flush()
        except OSError:  # the watchdog died: the next run's backstop is what is left
            print(
                "!! the run's watchdog is gone: a crash's leftovers wait for the next run",
                file=sys.stderr,
                flush=True,
            )
            self._pipe = None


def _say(message: str) -> None:
    # The launcher's terminal may be gone with it: the cleanup must not fail for that.
    with contextlib.suppress(OSError):
        print(f"quatro watchdog: {message}", file=sys.stderr, flush=True)


def main() -> int:
    # A terminal's signals reach the launcher's group, not this session; a hang-up, should one
    # come, must not stop the cleanup.
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    record = RunRecord()
    for line in sys.stdin:
        line = line.strip()
        if line == STAND_DOWN:
            return 0
        if line:
            # Half a line from a launcher killed while writing it: the last whole one stands.
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                record = RunRecord.from_json(line)
    died_at = time.time()  # a redis-server started later is a next run's
    try:
        stopped = stop_run(record, redis_started_before=died_at)
    except Exception as exc:  # the backstop of the next run is what is left
        _say(f"`make run` (pid {record.launcher}) died; could not stop its processes: {exc!r}")
        return 1
    _say(f"`make run` (pid {record.launcher}) died: stopped {stopped} of its processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
