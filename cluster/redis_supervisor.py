"""Keeps the embedded redis-server running: when it dies, it is started again on the same port
with the same append-only file, so the gateway's clients reconnect and find every session.

One thread, owned by the launcher, which stops and joins it before stopping redis-server. It
waits on the child with a bounded timeout (so a stop is noticed within half a second), restarts
with a backoff that doubles with each recent restart, and gives up loudly after `max_restarts`
within `window_s`: a redis-server that cannot stay up (a broken config, a full disk) must not
be restarted in a tight loop.
"""

from __future__ import annotations

import collections
import logging
import subprocess
import threading
import time

from cluster.procs import RedisServer

log = logging.getLogger("quatro.cluster.redis")

POLL_S = 0.5


class RedisSupervisor:
    def __init__(
        self,
        redis: RedisServer,
        max_restarts: int = 5,
        window_s: float = 60.0,
        first_backoff_s: float = 0.2,
        max_backoff_s: float = 8.0,
    ) -> None:
        self.redis = redis
        self.max_restarts = max_restarts
        self.window_s = window_s
        self.first_backoff_s = first_backoff_s
        self.max_backoff_s = max_backoff_s
        self.restarts = 0  # attempted, in all
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="redis-supervisor")

    def start(self) -> RedisSupervisor:
        self._thread.start()
        return self

    def wait(self, timeout: float) -> bool:
        """Whether supervision has ended (stopped, or given up) within `timeout` seconds."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Stop supervising and wait for the thread; redis-server itself is the caller's."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        recent: collections.deque[float] = collections.deque()
        while not self._stopping.is_set():
            proc = self.redis.proc
            if proc is None:
                return
            try:
                code = proc.wait(POLL_S)
            except subprocess.TimeoutExpired:
                continue
            if self._stopping.is_set():
                return
            now = time.monotonic()
            while recent and now - recent[0] > self.window_s:
                recent.popleft()
            if len(recent) >= self.max_restarts:
                log.critical(
                    "!! redis-server on port %d died %d times within %.0f s: NOT restarting it "
                    "again; sessions and tables are unavailable until `make run` is restarted !!",
                    self.redis.port,
                    len(recent) + 1,
                    self.window_s,
                )
                return
            backoff = min(self.first_backoff_s * 2 ** len(recent), self.max_backoff_s)
            recent.append(now)
            log.error(
                "!! redis-server (pid %d) exited with %s: restarting it on port %d from %s in "
                "%.1f s !!",
                proc.pid,
                code,
                self.redis.port,
                self.redis.dir,
                backoff,
            )
            if self._stopping.wait(backoff):
                return
            self.restarts += 1
            try:
                # This thread outlives the child: the child may die with it (no orphan).
                self.redis.start(thread_outlives_child=True)
            except Exception:
                log.exception("could not restart redis-server on port %d", self.redis.port)
                continue
            log.warning(
                "redis-server is back on port %d (pid %d)",
                self.redis.port,
                self.redis.proc.pid if self.redis.proc else -1,
            )
