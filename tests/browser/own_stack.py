"""The whole stack (`python -m cluster up`, test hooks on) as a child of a script, for the scripts
that drive the web client from outside a test session: `tests.browser.screenshots` and
`tests.browser.lighthouse`. QUATRO_STACK_URL points them at a stack already running instead.

    with own_stack() as base:  # "http://127.0.0.1:<port>"
        ...
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.browser.conftest import ROOT, free_port

UP_TIMEOUT_S = 180.0  # a Ray head and a gateway on a loaded 2-core machine


def wait_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + UP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the stack exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/emojis", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the stack did not come up in time:\n{log.read_text()[-3000:]}")


@contextmanager
def own_stack() -> Iterator[str]:
    given = os.environ.get("QUATRO_STACK_URL", "").rstrip("/")
    if given:
        yield given
        return
    port = free_port()
    log = Path(tempfile.mkdtemp()) / "stack.log"
    data = str(log.parent / "data")  # not ./.quatro-data: these sessions are throwaway
    env = {**os.environ, "PORT": str(port), "QUATRO_TEST_HOOKS": "1", "QUATRO_DATA_DIR": data}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cluster", "up"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_up(base, proc, log)
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            # The launcher's watchdog stops the Ray head and redis-server it leaves behind.
            proc.kill()
            proc.wait(timeout=10)
