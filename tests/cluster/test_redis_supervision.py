"""`make run`'s redis-server is supervised and its data outlives the stack (issue 10, part 6):
killed, it is back on the same port with the same append-only file, and the sessions made before
still work; the whole stack stopped and started again on the same QUATRO_DATA_DIR, too, and so
do its tables (started again from their snapshots)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from cluster.gateway_process import ROOT
from cluster.procs import RedisServer, free_port
from cluster.redis_supervisor import RedisSupervisor
from cluster.stack import Launched, Spec

BACK_DEADLINE_S = 30.0


def _redis_servers(stack: Launched) -> list[psutil.Process]:
    assert stack.pid is not None
    return [p for p in psutil.Process(stack.pid).children() if p.name().startswith("redis-server")]


def _listens_on(proc: psutil.Process, port: int) -> bool:
    try:
        conns = proc.net_connections(kind="tcp")
    except psutil.NoSuchProcess:
        return False
    return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in conns)


def _create_table(c: httpx.Client, token: str) -> httpx.Response:
    return c.post("/api/tables", json={"players": 4}, headers={"Authorization": f"Bearer {token}"})


def _until_created(c: httpx.Client, token: str, deadline: float) -> httpx.Response:
    """POST /api/tables until it answers 201 or the deadline passes (the gateway's Redis
    clients reconnect on their own)."""
    while True:
        try:
            r = _create_table(c, token)
            if r.status_code == 201 or time.monotonic() > deadline:
                return r
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def test_redis_server_comes_back_and_sessions_outlive_the_stack(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = Launched(Spec.under_load(table_slots=20, pool=1), tmp_path / "first.log", data_dir=data)
    first.start()
    try:
        with httpx.Client(base_url=first.url, timeout=30) as c:
            token = c.post("/api/sessions", json={"name": "Host"}).json()["token"]
            assert _create_table(c, "f" * 32).status_code == 401  # the token is what counts
            m = re.search(r"started redis-server on redis://127\.0\.0\.1:(\d+)/0", first.tail())
            assert m is not None, first.tail()
            port = int(m.group(1))
            # A second launcher on the same data dir would corrupt the append-only file.
            env = {**first.env(), "PORT": str(free_port())}
            second_try = subprocess.run(
                [sys.executable, "-m", "cluster", "up"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert second_try.returncode != 0
            assert "is in use by another `make run`" in second_try.stderr, second_try.stderr

            [killed] = _redis_servers(first)
            assert _listens_on(killed, port)
            killed.kill()  # SIGKILL: no chance to save anything on the way out
            deadline = time.monotonic() + BACK_DEADLINE_S
            # The signal is delivered, not yet acted on: until it has exited, the killed process
            # still lists its socket (the stop CI of 45fa2bb found it there, "back").
            while not [
                p for p in _redis_servers(first) if p.pid != killed.pid and _listens_on(p, port)
            ]:
                assert time.monotonic() < deadline, first.tail()
                time.sleep(0.1)
            assert not killed.is_running() or killed.status() == psutil.STATUS_ZOMBIE
            assert "restarting it on port" in first.tail(20000)
            r = _until_created(c, token, time.monotonic() + BACK_DEADLINE_S)
            assert r.status_code == 201, r.text
            code = r.json()["code"]
        first.stop()  # SIGTERM: the launcher stops redis-server, and keeps its data dir
        assert any((data / "redis").iterdir())

        second = Launched(
            Spec.under_load(table_slots=20, pool=1), tmp_path / "second.log", data_dir=data
        )
        second.start()
        try:
            with httpx.Client(base_url=second.url, timeout=30) as c:
                assert _create_table(c, "f" * 32).status_code == 401
                r = _create_table(c, token)  # a session of the first run
                assert r.status_code == 201, r.text
                # And its table: Ray lost the actor with the stack, Redis kept the snapshot.
                r = c.get(f"/api/tables/{code}")
                assert r.status_code == 200, r.text
                assert r.json()["seats"][0]["name"] == "Host"
        finally:
            second.stop()
    finally:
        first.stop()


def test_a_redis_server_that_cannot_stay_up_is_not_restarted_forever(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "redis").mkdir()
    redis = RedisServer(dir=tmp_path / "redis").start()
    supervisor = RedisSupervisor(redis, max_restarts=3, window_s=60, first_backoff_s=0.05)
    supervisor.start()
    try:
        assert not supervisor.wait(0.5)  # a healthy redis-server is simply watched
        assert redis.proc is not None
        shutil.rmtree(redis.dir)  # a broken config: redis-server can no longer start there
        redis.proc.kill()
        assert supervisor.wait(BACK_DEADLINE_S), "still restarting a redis-server that dies"
        assert supervisor.restarts == 3
        assert "NOT restarting it again" in caplog.text
        assert redis.proc.poll() is not None  # and nothing of it is left running
    finally:
        supervisor.stop()
        redis.cleanup()
