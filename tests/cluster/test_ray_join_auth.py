"""A gateway joining an existing Ray cluster (RAY_ADDRESS) with token auth: the token is taken
from RAY_AUTH_TOKEN_PATH and, with RAY_AUTH_MODE unset, token mode follows from it; with
RAY_AUTH_MODE=disabled it is refused by the cluster, and says loudly that it tried without
authentication (issue 10, part 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.procs import free_port
from tests.conftest import Gateway, Stack

JOIN_DEADLINE_S = 120.0
WARNING = "WITHOUT authentication"
# A refused driver tries the GCS once a second, RAY_NUM_REDIS_GET_RETRIES times (20 by default,
# ray/_private/node.py), every try refused for its token: 5 say it as plainly as 20, 15 s sooner.
REFUSED_TRIES = {"RAY_NUM_REDIS_GET_RETRIES": "5"}


def test_gateway_joins_with_the_token_file_alone(stack: Stack, tmp_path: Path) -> None:
    assert stack.head.token_path is not None
    gw = stack.gateway(tmp_path, RAY_AUTH_MODE="", QUATRO_POOL_SIZE="0")  # mode unset
    try:
        assert gw.env["RAY_AUTH_TOKEN_PATH"] == str(stack.head.token_path)
        gw.wait_ready(JOIN_DEADLINE_S)
        assert WARNING not in gw.log.read_text()
    finally:
        gw.stop()


def test_gateway_without_the_token_is_refused_and_says_so(stack: Stack, tmp_path: Path) -> None:
    env = {**stack.a.env, "RAY_AUTH_MODE": "disabled", "QUATRO_POOL_SIZE": "0", **REFUSED_TRIES}
    del env["RAY_AUTH_TOKEN_PATH"]
    env["PORT"] = str(port := free_port())
    gw = Gateway(port, env, tmp_path / "gateway.log").start()
    try:
        with pytest.raises(RuntimeError, match="InvalidAuthToken"):
            gw.wait_ready(JOIN_DEADLINE_S)  # RuntimeError: it exited, refused
        assert WARNING in gw.log.read_text()
    finally:
        gw.stop()
