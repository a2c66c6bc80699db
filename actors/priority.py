"""A table actor's CPU priority: low while it starts, the priority of play once it holds a table.

Starting a table actor costs about 0.6 s of CPU (a Python process, Ray's core worker, our
imports), and a burst of new tables or a pool refill starts many. At the same priority as the
tables in play, those starts take the CPU from them: every match on the node stutters while
new ones open (issue 21). So Ray starts its workers at `worker_niceness` (Ray's default, 15;
`cluster.procs` leaves it so), and an actor raises itself to `QUATRO_PLAY_NICE` (0 by default)
when it gets a table — opened from the pool, or found again after a restart. Starts then take
only what play leaves; a pooled actor waiting for its table stays low too.

Linux keeps a nice value per thread: every thread of the process is raised, and threads started
later inherit it from the thread that starts them. Raising a priority needs CAP_SYS_NICE or an
RLIMIT_NICE that allows it; a container that grants neither (the chart's pods run as a user
with no capabilities) keeps its actors at the start priority, said once in the log and in
`ping()["nice"]`, and plays as before.
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger("quatro.priority")

PLAY_NICE_ENV = "QUATRO_PLAY_NICE"
DEFAULT_PLAY_NICE = 0


def play_nice() -> int | None:
    """The nice value tables play at; None when the setting is empty (leave it as Ray set it)
    or not a number: a typo in an operator's setting must not keep any table from opening or
    a restarted one from coming back, so it is said in the log and ignored."""
    raw = os.environ.get(PLAY_NICE_ENV, str(DEFAULT_PLAY_NICE)).strip()
    if raw == "":
        return None
    try:
        return max(-20, min(19, int(raw)))
    except ValueError:
        log.warning("%s=%r is not a nice value: ignored", PLAY_NICE_ENV, raw[:32])
        return None


def current() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


def to_play() -> bool:
    """Raise every thread of this process to the priority of play. False when that is not
    allowed here, or not asked for; the process then keeps the priority it has."""
    nice = play_nice()
    if nice is None:
        return False
    return to(nice)


def to(nice: int) -> bool:
    """Every thread of this process at `nice`: lowering a priority is always allowed (an actor
    back in the pool, actors/reuse.py), raising it may not be (False then)."""
    try:
        threads = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:  # no /proc: this thread only (it runs the table's loop)
        threads = [0]
    try:
        for tid in threads:
            try:
                if os.getpriority(os.PRIO_PROCESS, tid) != nice:
                    os.setpriority(os.PRIO_PROCESS, tid, nice)
            except ProcessLookupError:
                continue  # a thread that ended meanwhile
    except PermissionError:
        log.warning(
            "cannot raise this table actor to nice %d (no CAP_SYS_NICE, RLIMIT_NICE too low): "
            "it plays at nice %d",
            nice,
            current(),
        )
        return False
    return True
