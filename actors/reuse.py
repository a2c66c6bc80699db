"""Table after table in one actor: when its table stops, a table actor goes back to the pool
instead of ending, for up to `QUATRO_ACTOR_TABLES` tables (1 by default: each actor ends with its
table, as before; the suite's shared stack runs with 25, tests/conftest.py).

Why not on by default yet: it was kept off when the soak on Redis Cluster refused one creation
of its burst with reuse on (the clean-clone CI of cc802cf). That refusal came again with reuse off
(c5d78a2), and its cause was the pool's: a failed start's "no room" flag left up
(tests/cluster/test_pool_failed_starts.py, mended in 98eb818). What is left before it is on by
default: the stacks the suite does not share (the autoscaler's, where an ended table's actor back
in the pool must not keep a worker from being removed; the chart's pods in tests/deploy; the
soak) run with it and pass. Until then, an operator opts in.

A new actor costs about 0.6 s of CPU (a Python process, Ray's core worker, our imports: see
actors/priority.py), taken from the tables in play on its node; a table of a few minutes
paid that for itself alone. Reused, the actor keeps its process and its Ray name and gets a
fresh table core, a fresh incarnation (its data-plane links of the last table are refused) and
its pooled priority back; each table has its own id (its replay's name, its matches' ids), never
the actor's name.

What makes that safe, one table at a time:
- Every call about a table carries its code (`actors.protocol.addressed`); an actor that does not
  hold that table raises `TableNotHere`, and the caller finds the table's record gone: a gateway
  that remembered the actor for an ended table can never reach the next one.
- An actor that was ever asked without a code (a gateway of an older release during a rolling
  upgrade) or opened a table whose id is its own name (opened by such a gateway) is never
  reused: it ends with its table, as every actor did before.
- The cap bounds what a long-lived process may accumulate (memory a table left behind).
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger("quatro.table")

TABLES_ENV = "QUATRO_ACTOR_TABLES"
DEFAULT_TABLES = 1


def tables_per_actor() -> int:
    """How many tables one actor serves before it ends (1: one table, then it ends). A setting
    that is not a whole number ≥ 1 is said in the log and the default used: a typo must not
    stop tables from opening."""
    raw = os.environ.get(TABLES_ENV, str(DEFAULT_TABLES)).strip()
    try:
        tables = int(raw)
    except ValueError:
        tables = 0
    if tables < 1:
        log.warning("%s=%r is not a count of tables: %d", TABLES_ENV, raw[:32], DEFAULT_TABLES)
        return DEFAULT_TABLES
    return tables
