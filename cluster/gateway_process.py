"""A gateway (`python -m gateway`) as a child process, for the test stack and the load scripts
that run gateways of their own: started in a session of its own, its output in a log file, and
stopped by its process group. `start()` again after a kill serves the same port."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cluster.procs import stop_group
from cluster.readiness import wait_ready

ROOT = Path(__file__).resolve().parents[1]
READY_TIMEOUT_S = 180.0  # joining Ray on a loaded 2-core machine takes a while


@dataclass
class GatewayProcess:
    port: int
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    root: Path = ROOT  # the code it runs (another release's, for an upgrade's tests)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> GatewayProcess:
        out = open(self.log, "ab")  # noqa: SIM115 - the child owns it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gateway"],
            cwd=self.root,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        return self

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        assert self.proc is not None
        wait_ready(self.url, self.proc, timeout, lambda: self.log.read_text()[-3000:])

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc, timeout=10)
            self.proc = None
