"""Async tests here run on their own event loop in their own thread, as tests/cluster's do: the
browser tests' Playwright keeps a loop running in the main thread for the rest of the session,
and pytest-asyncio's runner then refuses to start (seen in a full `make test`)."""

from tests.cluster.conftest import pytest_pyfunc_call as pytest_pyfunc_call
