"""Async tests here run on their own event loop in their own thread, as tests/cluster's do: the
browser tests' Playwright keeps a loop running in the main thread, and pytest-asyncio's runner
then refuses to start (tests/gateway met it in a full `make test`; these only escaped by running
before the browser tests)."""

from tests.cluster.conftest import pytest_pyfunc_call as pytest_pyfunc_call
