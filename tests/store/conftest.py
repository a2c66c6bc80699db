"""The store's tests: a real Redis Cluster (Debian's redis-server, `cluster-enabled yes`) started
by the tests themselves on free loopback ports, with a short `cluster-node-timeout` so that a
failover takes a second or two. One cluster serves every test of the session that leaves it as
it found it; a test that kills a node starts a small one of its own.

Async tests run on their own event loop in their own thread, as tests/cluster's do."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cluster.redis_cluster import LocalRedisCluster
from tests.cluster.conftest import pytest_pyfunc_call as pytest_pyfunc_call

NODE_TIMEOUT_MS = 1000  # a primary unheard of for this long is failed over by its replica


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalRedisCluster]:
    """Three primaries, a replica each: shared, never killed."""
    cluster = LocalRedisCluster(primaries=3, replicas=1, node_timeout_ms=NODE_TIMEOUT_MS).start()
    try:
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture
def own_cluster() -> Iterator[LocalRedisCluster]:
    """A cluster of the test's own (three primaries, a replica each), to kill nodes of."""
    cluster = LocalRedisCluster(primaries=3, replicas=1, node_timeout_ms=NODE_TIMEOUT_MS).start()
    try:
        yield cluster
    finally:
        cluster.cleanup()
