"""A long command that mostly waits, run beside the rest of the session: started as soon as the
session has collected a test that needs it, judged by that test, which the session orders last
(tests/README.md, "Background runs"). The short soak is one: four minutes of faults injected into
a stack of its own, its tables idling between them, while the other tests use the cores.

Its output goes to files, never a pipe: nobody reads it until the end, and a full pipe would
stop the command. A session that ends before judging it (a failure with -x, Ctrl-C, SIGTERM)
stops it, and the command stops the stack it started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cluster.gateway_process import ROOT

STOP_S = 60.0  # a command's own cleanup after SIGTERM: its stack's processes, by PID


@dataclass
class Background:
    """`argv`, run from the repository's root with its output in `out` (stdout.txt and
    stderr.txt), given `limit_s` from its start."""

    argv: list[str]
    out: Path
    limit_s: float
    proc: subprocess.Popen[bytes] | None = None
    started: float = field(default=0.0)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> Background:
        self.out.mkdir(parents=True, exist_ok=True)
        with (
            (self.out / "stdout.txt").open("wb") as out,
            (self.out / "stderr.txt").open("wb") as err,
        ):
            self.proc = subprocess.Popen(
                self.argv, cwd=ROOT, stdout=out, stderr=err, start_new_session=True
            )
        self.started = time.monotonic()
        return self

    def wait(self) -> tuple[int, str, str]:
        """Its exit status, stdout and stderr, once it has ended; a failure once it has run
        `limit_s` (it is stopped then)."""
        assert self.proc is not None
        left = self.limit_s - (time.monotonic() - self.started)
        try:
            rc = self.proc.wait(max(1.0, left))
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f"{self.argv} still ran after {self.limit_s:.0f} s:\n{self.text('stderr')}")
        return rc, self.text("stdout"), self.text("stderr")

    def text(self, name: str) -> str:
        with contextlib.suppress(OSError):
            return (self.out / f"{name}.txt").read_text(errors="replace")
        return ""

    def stop(self) -> None:
        """SIGTERM to its process group (a shell running commands in turn, and the command it
        runs), so that each stops what it started; then SIGKILL of what is left of the group."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_S
        while time.monotonic() < deadline and _group_alive(proc):
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def _group_alive(proc: subprocess.Popen[bytes]) -> bool:
    proc.poll()  # reaps the leader once it has ended, or the group never empties
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        return False
    return True
