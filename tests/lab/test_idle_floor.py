"""The idle floor's variants (`--env KEY=VALUE`) and the node environment they are measured
against (cluster.procs.RAY_NODE_ENV)."""

from __future__ import annotations

import argparse
import shutil

import pytest

from cluster.procs import RAY_NODE_ENV, RayHead, ray_env
from lab.idle_floor import env_setting


def test_a_variant_is_key_equals_value() -> None:
    assert env_setting("MALLOC_ARENA_MAX=2") == ("MALLOC_ARENA_MAX", "2")
    assert env_setting("QUATRO_WORKER_KEEP_OUT=") == ("QUATRO_WORKER_KEEP_OUT", "")
    assert env_setting("A=b=c") == ("A", "b=c")
    for bad in ("MALLOC_ARENA_MAX", "=2", "NOT A KEY=1"):
        with pytest.raises(argparse.ArgumentTypeError):
            env_setting(bad)


def test_ray_nodes_get_two_malloc_arenas_and_drivers_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    head = RayHead(auth_mode="disabled")
    try:
        assert RAY_NODE_ENV == {"MALLOC_ARENA_MAX": "2"}
        assert head.node_env()["MALLOC_ARENA_MAX"] == "2"
        assert "MALLOC_ARENA_MAX" not in ray_env("disabled")  # the gateway's driver
        monkeypatch.setenv("MALLOC_ARENA_MAX", "4")  # the environment still decides
        assert head.node_env()["MALLOC_ARENA_MAX"] == "4"
    finally:
        shutil.rmtree(head.temp_dir, ignore_errors=True)
