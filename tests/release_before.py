"""The release before issue 46 (b29edd8, the last commit of main before it), its own code, run as
it is: what fills a store as production holds it when this release arrives. Issue 47's guests
arrive on a store of the release before them (`BEFORE_GUESTS`, d26b374): `tree(path,
BEFORE_GUESTS)` (tests/gateway/test_guest_migration.py).

- `tree(path)`: its packages, from `git archive`, for a gateway of that release
  (`Stack.gateway_of`, tests/store/test_rating_upgrade.py) or a process of its own;
- `older_matches(tree, url, matches)`: its `RatingStore` applies and records finished matches
  in the Redis at `url`, exactly as its table actors settle them (a subprocess with this venv
  and that release's packages on its path), for the tests that need many matches of several
  kinds without a table actor each.

A match is `Match`: who sat where (a player's id for a person, None for a bot), the scores; its
id and end time come from its place in the list."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from dataclasses import asdict, dataclass
from pathlib import Path

from cluster.gateway_process import ROOT

RELEASE_BEFORE = "b29edd8"
BEFORE_GUESTS = "d26b374"  # the last commit of main before issue 47's guests
PACKAGES = ("actors", "cluster", "engine", "gateway")

# Run in that release's tree: one RatingStore, every match in order, as its results task does.
_APPLY = """
import asyncio, json, sys
from actors.ratings import RatingStore
from cluster.redis_client import async_redis
from engine.ratings import MatchResult, SeatResult

async def main() -> None:
    redis = async_redis(sys.argv[1])
    store = RatingStore(redis)
    try:
        for m in json.loads(sys.stdin.read()):
            seats = tuple(SeatResult(*s) for s in m["seats"])
            result = MatchResult(
                1, len(seats), tuple(m["scores"]), seats, "normal", False, m["ended_at"]
            )
            changes = await store.apply(m["mid"], result, m["ended_at"])
            await store.record(m["mid"], m["table_id"], "OLDREL", result, changes)
    finally:
        await redis.aclose()

asyncio.run(main())
"""


@dataclass(frozen=True)
class Match:
    """A 4-, 6- or 8-seat match: `seats[s]` the person in seat s (None: a bot), team s % teams;
    `scores` per team."""

    seats: tuple[str | None, ...]
    scores: tuple[int, ...]


def tree(where: Path, release: str = RELEASE_BEFORE) -> Path:
    """The release's packages under `where` (AssertionError without the repository's git
    history, which these tests need)."""
    archive = where / "code.tar"
    try:
        subprocess.run(
            ["git", "-C", str(ROOT), "archive", "-o", str(archive), release, *PACKAGES],
            check=True,
            capture_output=True,
        )
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        raise AssertionError(f"these tests need the repository's git history: {exc}") from exc
    with tarfile.open(archive) as tar:
        tar.extractall(where, filter="data")
    archive.unlink()
    if release == RELEASE_BEFORE:
        assert not (where / "actors" / "rating_fix.py").exists(), "not the release before"
    else:
        assert not (where / "gateway" / "guests.py").exists(), "not the release before guests"
    return where


def wire(matches: list[Match], first_ms: int = 1_764_000_000_000) -> list[dict[str, object]]:
    """The matches as the subprocess reads them: ids `t-<n>.1`, ended (and applied) one minute
    apart from `first_ms`."""
    out = []
    for n, m in enumerate(matches):
        teams = len(m.scores)
        seats = [
            [s, s % teams, pid, pid.upper() if pid else f"Bot {s + 1}"]
            for s, pid in enumerate(m.seats)
        ]
        out.append(
            {
                **asdict(m),
                "mid": f"t-{n:04d}.1",
                "table_id": f"t-{n:04d}",
                "seats": seats,
                "ended_at": first_ms + 60_000 * n,
            }
        )
    return out


def older_matches(code: Path, url: str, matches: list[dict[str, object]]) -> None:
    """The release before settles `matches` (from `wire`) in the Redis at `url`."""
    done = subprocess.run(
        [sys.executable, "-c", _APPLY, url],
        input=json.dumps(matches),
        cwd=code,
        env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
