"""A table's snapshot as Redis keeps it: its layout, read back into a table (older formats
migrated on the way in), and the directory's record of a table. No Redis here: actors/store.py
reads and writes the keys."""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from actors.idle import IdleLimits
from actors.protocol import Entry, entry_from_json
from engine import Table

# The snapshot's layout. 1: before `format` existed; 2: adds it, and holders in the log.
SNAPSHOT_FORMAT = 2
# How long a table waits before it stops (actors/idle.py), when its snapshot does not say.
DEFAULT_IDLE = IdleLimits().values()
# Replays: every event of the table, public and private, is appended to `keys.replay` (the REST
# endpoint filters by audience); the list is kept this long after the table's last event.
DEFAULT_REPLAY_TTL_S = 7 * 24 * 3600


class SnapshotUnreadable(Exception):
    """The saved table cannot be read back (corrupt, or a format this code does not know)."""


@dataclass
class Saved:
    """A table as its snapshot and log had it."""

    table: Table
    seq: int
    entries: list[Entry]
    conns: dict[int, str]
    done: OrderedDict[str, dict[str, Any]]
    policy: str
    idle: tuple[float, ...]
    replay_ttl: int
    results: dict[str, Any]  # matches whose ratings are owed (actors/results.py)
    # Saved as the table parked (actors/parking.py): when, and when someone last changed it
    # (table times, ms); None for a table that did not park.
    parked: dict[str, int] | None = None


def record_json(
    actor_name: str, players: int, cell: str = "", moves: int = 0, table_id: str = ""
) -> str:
    """The directory's record of a table: how gateways find its actor, and (with cells) which
    cell's Ray runs it and how many times it was moved there. No cell: the record is byte for
    byte what it was before cells. `table_id` (its replay's name, its matches' ids) is the
    table's own (`actors.ray_names.new_table_id`; the name of the actor that opened it when an
    older gateway did, the default here); a table moved off a lost node into a pooled actor
    keeps it (actors/rescue.py)."""
    record: dict[str, Any] = {
        "table_id": table_id or actor_name,
        "actor": actor_name,
        "players": players,
    }
    if cell:
        record["cell"] = cell
    if moves:
        record["moves"] = moves
    return json.dumps(record)


def migrate(snap: Any) -> dict[str, Any]:
    """A snapshot of any known format, in today's layout. Raises SnapshotUnreadable for one
    that is not a snapshot or comes from a newer (unknown) format."""
    if not isinstance(snap, dict):
        raise SnapshotUnreadable("not a JSON object")
    version = snap.get("format", 1)
    if version == 1:
        # Format 1 differs only by its missing version and its log entries without holders
        # (entry_from_json gives those none), and by a two-value idle.
        snap = {**snap, "format": SNAPSHOT_FORMAT}
        version = SNAPSHOT_FORMAT
    if version != SNAPSHOT_FORMAT:
        raise SnapshotUnreadable(f"unknown snapshot format {version!r}")
    return dict(snap)


def load(raw: str, raw_log: list[str]) -> Saved:
    """Rebuild the table from its snapshot and log; SnapshotUnreadable if they cannot be read.
    Older formats are migrated on the way in."""
    try:
        snap = migrate(json.loads(raw))
        table = Table.from_snapshot(snap["table"])
        seq = int(snap["seq"])
        entries = [entry_from_json(json.loads(x)) for x in raw_log]
        conns = {int(k): str(v) for k, v in snap["conns"].items()}
        done = OrderedDict((str(k), dict(v)) for k, v in snap["done"])
        policy = str(snap.get("bot_policy", "smart"))
        idle = tuple(float(x) for x in snap.get("idle", DEFAULT_IDLE))
        replay_ttl = int(snap.get("replay_ttl", DEFAULT_REPLAY_TTL_S))
        results = dict(snap.get("results") or {})  # saved before ratings existed: none owed
        parked = {str(k): int(v) for k, v in snap["parked"].items()} if "parked" in snap else None
    except SnapshotUnreadable:
        raise
    except Exception as exc:  # whatever a damaged blob makes the parsers raise
        raise SnapshotUnreadable(f"{type(exc).__name__}: {exc}") from exc
    return Saved(table, seq, entries, conns, done, policy, idle, replay_ttl, results, parked)
