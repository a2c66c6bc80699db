"""Table after table in one actor: when its table stops, a table actor goes back to the pool
instead of ending, for up to `QUATRO_ACTOR_TABLES` tables (`DEFAULT_TABLES` by default, in every
stack: `make run`, the suite, the soak, the autoscaler's and the chart's pods; 1: each actor ends
with its table, as before issue 48).

On by default since issue 48. It was opt-in until the stacks the suite does not share ran with
it: the soak (on one Redis and on a Redis Cluster), the chart's pods (tests/deploy), and Ray's
autoscaler, where an ended table's actor back in the pool would have kept its worker from ever
going idle: under the autoscaler, ready actors leave the nodes that carry no table
(actors/placement.py, `evictions`), and a draining node's ready actors end (actors/drain.py).

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
- The cap bounds what a long-lived process may accumulate: ~0.1 MB a table over its first ten,
  then less (allocator and caches; nothing of a table stays reachable), `python -m
  lab.reuse_memory`, docs/performance.md "Memory over its tables".
- A ready actor that no list names (its gateway died between starting it and listing it, or
  Redis lost the list) would hold its slot for good: each looks every `QUATRO_POOL_CHECK_S`
  whether its name is on its cell's list, and ends when it is not, twice in a row (a gateway
  lists a new actor a second or so after its start, and one it takes for a table opens it at
  once).
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger("quatro.table")

TABLES_ENV = "QUATRO_ACTOR_TABLES"
DEFAULT_TABLES = 50
CHECK_ENV = "QUATRO_POOL_CHECK_S"
DEFAULT_CHECK_S = 120.0
MISSES_TO_END = 2  # looks in a row that find a ready actor on no list, and it ends


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


def check_every_s() -> float:
    """How often a ready actor looks whether a list names it (`QUATRO_POOL_CHECK_S`); a
    setting that is not a number of seconds above 0 is said in the log and the default used."""
    raw = os.environ.get(CHECK_ENV, str(DEFAULT_CHECK_S)).strip()
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        log.warning("%s=%r is not a number of seconds: %s", CHECK_ENV, raw[:32], DEFAULT_CHECK_S)
        return DEFAULT_CHECK_S
    return seconds
