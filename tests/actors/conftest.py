"""Async tests here run on their own event loop in their own thread, as tests/cluster's do: the
browser tests' Playwright keeps a loop running in the main thread, and pytest-asyncio's runner
then refuses to start (tests/gateway met it in a full `make test`; these only escaped by running
before the browser tests)."""

from collections.abc import Iterator

import pytest

from cluster.procs import RedisServer
from tests.cluster.conftest import pytest_pyfunc_call as pytest_pyfunc_call


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A redis-server of the test's own, on a free port."""
    server = RedisServer().start()
    try:
        yield server.url
    finally:
        server.cleanup()
