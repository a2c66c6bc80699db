"""The whole stack (`python -m cluster up`, test hooks on) as a child of a script, for the scripts
that drive the web client from outside a test session: `tests.browser.screenshots` and
`tests.browser.lighthouse`. QUATRO_STACK_URL points them at a stack already running instead.
Started by cluster/stack.py, as every stack of the tests and the load tests is.

    with own_stack() as base:  # "http://127.0.0.1:<port>"
        ...
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cluster.stack import Launched, Spec

UP_TIMEOUT_S = 180.0  # a Ray head and a gateway on a loaded 2-core machine


@contextmanager
def own_stack() -> Iterator[str]:
    given = os.environ.get("QUATRO_STACK_URL", "").rstrip("/")
    if given:
        yield given
        return
    # A data dir of its own, deleted afterwards: these sessions are throwaway, not
    # ./.quatro-data's.
    log = Path(tempfile.mkdtemp()) / "stack.log"
    # Every player of these scripts comes from 127.0.0.1 (`crowd`: the per-address limits
    # lifted, and two of them at one table are two people).
    stack = Launched(Spec(test_hooks=True, crowd=True), log, ready_s=UP_TIMEOUT_S).start()
    try:
        yield stack.url
    finally:
        stack.stop()
