"""The names a table's keys had before they carried its code as a hash tag (issue 35), read while
a live deployment moves over; nothing of this release writes them.

Who still writes them: table actors of the older release, until their worker is replaced (a
rolling upgrade). So nothing moves them from the outside: a gateway reads a table's record
under the old name when the new one is not there, and a table actor of this release that finds
its table only under the old names (restored from them) moves it — its replay at once, its
snapshot and log by saving them under the new names and then deleting the old ones. An older
actor never finds the old snapshot again, so it can never come back on a stale one. Replays of
tables that stopped before the upgrade are read where they are. Every old key expires by
itself: table records, snapshots and logs within a day, replays within `QUATRO_REPLAY_TTL`
(7 days) of their table's last event. After that this module, and its readers, can go:
`python -m cluster.redis_keys count-legacy` says how many are left.

A Redis Cluster never holds them: its data is copied from a single Redis by
`python -m cluster.redis_keys copy`, which gives every key its new name (docs/operations.md).
"""

from __future__ import annotations

import re

# The old name of each key of a table, and the pattern `copy` and `count-legacy` look for.
TABLE = re.compile(r"^quatro:(table|snap|log|lost):([^{}:]+)$")
REPLAY = re.compile(r"^quatro:(replay|replay-meta):([^{}:]+)$")


def table(code: str) -> str:
    return f"quatro:table:{code}"


def snapshot(code: str) -> str:
    return f"quatro:snap:{code}"


def log(code: str) -> str:
    return f"quatro:log:{code}"


def lost(code: str) -> str:
    return f"quatro:lost:{code}"


def replay(table_id: str) -> str:
    return f"quatro:replay:{table_id}"


def replay_meta(table_id: str) -> str:
    return f"quatro:replay-meta:{table_id}"
