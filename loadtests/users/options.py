"""The players' options on Locust's command line (`--players`, `--pace`, …), what every module
of the players reads them as, and what counts as a refusal of the game rather than a failure."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from locust.env import Environment

ANSWER_TIMEOUT_S = 10.0  # an answer later than this is a failure

# Refusals the rules produce in normal play between simultaneous players: not failures.
GAME_REFUSALS = frozenset(
    {
        "stale",
        "cooldown",
        "floor_cooldown",
        "wrong_phase",
        "sign_taken",
        "vote_refused",
        "not_voter",
        "no_floor",
        "not_your_card",
    }
)


class ExchangeError(Exception):
    """A failed exchange, as Locust shows it."""


def now_ms() -> int:
    return int(time.time() * 1000)


def add_options(parser: Any) -> None:
    """Our options in Locust's parser (every worker reads them, the master passes them on)."""
    group = parser.add_argument_group("Quatro")
    group.add_argument("--players", type=int, default=6, help="seats per table: 4, 6 or 8")
    group.add_argument(
        "--pace", type=float, default=1.0, help="human pace factor: 1 = human, 2 = twice as fast"
    )
    group.add_argument(
        "--match-rounds",
        type=int,
        default=0,
        help="rounds a group plays at one table before it opens a new one; 0 = whole matches, "
        "the host asking for a rematch after each",
    )
    group.add_argument(
        "--drop-rate",
        type=float,
        default=0.0,
        help="connection drops per user per minute (the user comes back after 0.5-3 s)",
    )
    group.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="the server's time_scale test hook (needs QUATRO_TEST_HOOKS=1 on the server); "
        "use with --pace 1/scale",
    )
    group.add_argument("--vote-accept", type=float, default=0.7, help="P(accept a reshuffle)")
    group.add_argument(
        "--quick-share",
        type=float,
        default=0.0,
        help="share of the tables a user joins by Play now (POST /api/quickplay) rather than "
        "with friends; a public table's players leave it when its match is over",
    )
    group.add_argument(
        "--level",
        default="normal",
        help="the engine bot level the players play at (engine.bots.levels): 'sharp' sends "
        "about the commands per table of the players before issue 46",
    )
    group.add_argument(
        "--samples-dir",
        default=os.environ.get("QUATRO_LOAD_SAMPLES", ""),
        help="write every exchange and gauge to samples-<pid>.csv here (for the plots)",
    )
    group.add_argument(
        "--answer-timeout",
        type=float,
        default=ANSWER_TIMEOUT_S,
        help="seconds after which an unanswered command is a failure (the soak waits past the "
        "gateway's own wait through faults, gateway/table_link.py REQUEST_WAIT_S)",
    )
    group.add_argument(
        "--hosts",
        default="",
        help="comma-separated gateway URLs: users spread over them and, when theirs is gone, "
        "come back through the next (a lost socket is then reported as LOST ws:lost@<port>, "
        "for the soak to judge against its faults)",
    )
    group.add_argument(
        "--soak-dir",
        default="",
        help="the soak's folder: each process writes the scores its users saw (ledger-<pid>"
        ".jsonl) and its tables' last events (tables-<pid>.json), and reads control.json "
        "(a reconnect storm)",
    )


@dataclass(frozen=True)
class Options:
    players: int
    pace: float
    match_rounds: int
    drop_rate: float
    time_scale: float
    vote_accept: float
    samples_dir: str
    hosts: tuple[str, ...] = ()
    soak_dir: str = ""
    answer_timeout: float = ANSWER_TIMEOUT_S
    quick_share: float = 0.0
    level: str = "normal"

    @classmethod
    def of(cls, env: Environment) -> Options:
        o = env.parsed_options
        if o is None:
            return cls(6, 1.0, 0, 0.0, 1.0, 0.7, "")
        players = int(o.players)
        if players not in (4, 6, 8):
            raise ValueError("--players must be 4, 6 or 8")
        return cls(
            players=players,
            pace=float(o.pace),
            match_rounds=int(o.match_rounds),
            drop_rate=float(o.drop_rate),
            time_scale=float(o.time_scale),
            vote_accept=float(o.vote_accept),
            samples_dir=str(o.samples_dir or ""),
            hosts=tuple(h.strip().rstrip("/") for h in str(o.hosts or "").split(",") if h.strip()),
            soak_dir=str(o.soak_dir or ""),
            answer_timeout=float(o.answer_timeout),
            quick_share=float(o.quick_share),
            level=str(o.level),
        )
