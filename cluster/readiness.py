"""Waiting for a gateway we started to say it is ready, shared by the test fixtures and the
load-test stack: poll `/readyz` until it answers 200, failing fast if the process died."""

from __future__ import annotations

import contextlib
import subprocess
import time
import urllib.request
from collections.abc import Callable


def wait_ready(
    url: str, proc: subprocess.Popen[bytes], timeout: float, tail: Callable[[], str]
) -> None:
    """Return once `url/readyz` answers 200. Raises RuntimeError if `proc` exits first and
    TimeoutError after `timeout` seconds; both carry `tail()` (the end of the process's log)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited: {tail()}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(url + "/readyz", timeout=2) as answer,
        ):
            if answer.status == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{url} not ready after {timeout} s: {tail()}")
