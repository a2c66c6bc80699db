"""A gateway whose port is taken stops at once, before it joins Ray: bound after the app's
startup, uvicorn's failed bind left it (and `make run` around it) waiting forever on its own
shutdown, deaf to SIGTERM."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from cluster.gateway_process import ROOT


def test_a_gateway_on_a_taken_port_ends_with_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = dict(
            os.environ,
            PORT=str(port),
            HOST="127.0.0.1",
            # Nothing listens there: reaching Ray or Redis would hang or fail differently.
            RAY_ADDRESS="127.0.0.1:9",
            REDIS_URL="redis://127.0.0.1:9",
            PYTHONPATH=str(ROOT),
        )
        done = subprocess.run(
            [sys.executable, "-m", "gateway"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode != 0
    assert "Address already in use" in done.stderr
    assert "ray" not in done.stderr.lower()
