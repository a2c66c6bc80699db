"""Locust users that are Quatro players: one user is one human at one seat.

    locust -f loadtests/locustfile.py --headless -u 12 -r 4 -t 60s --host http://127.0.0.1:8000 \
        --players 6 --pace 1.0 --drop-rate 0.2

(`python -m loadtests.run` does this for you and writes a results folder.)

A user creates a session over REST and is grouped with the users of its own Locust process into
tables of `--players`: the first of a group creates the table, the others take their seats by
invite code, everyone connects to `/ws`, and the host starts when every seat is connected. No
seat is a bot: all seats are Locust users. Then each plays with the engine's smart policy
(`engine.bots`, the code the table actor's bots run) fed only with its own socket's frames — the
welcome snapshot and the events addressed to its seat (R30). On top of the policy, the user does
what a human does and a bot does not: it answers reshuffle votes (R19), asks for a rematch when
the match is over (host), and drops its connection now and then to come back (R24, R25).

Each socket has one reader greenlet that never stops reading; the user's task never blocks in
`recv()`: it sleeps on an event until the policy's next action is due or a frame changes things.

Every exchange is reported with `events.request.fire` under request type `WS`:

    hello→welcome      hello sent → welcome received (first connection to a table)
    reconnect→welcome  the same after a drop
    swap→ack           swap sent → its ack on the same socket
    swap→seen          swap sent → `swapped` shown on ANOTHER seat's socket (one sample per seat
                       of this process that sees it)
    floor→ack, emit→ack, ready→ack, sign→ack, vote→ack, vote_request→ack, next_round→ack,
    rematch→ack, quatro→ack, contre→ack
    call→reveal        quatro/contre sent → the `reveal` that names this seat as the caller

Refusals that are part of the game (two players racing for one card, a call just after another
ended the round…) are reported under request type `REFUSED` (`swap:stale`, `swap:cooldown`…)
and never as failures. Anything else — another error code, an answer that does not come within
`ANSWER_TIMEOUT_S` (`--answer-timeout`), a gap in `seq`, a socket the server closed — is a failure.

With `--hosts` (the soak, loadtests/soak.py), users spread over several gateways and come back
through the next one when theirs is gone; a socket lost or a connection refused is then reported
under request type `LOST` (`ws:lost@<port>`, `connect:refused@<port>`), not as a failure: the
soak counts it as one unless a gateway it killed explains it.

Each sample of the raw CSV (`--samples-dir`) also says since when its table has been in play
(so a capacity step can judge the tables already live during a ramp apart from the new ones),
and the process measures its own event loop's lag (`LAG`/`loop`: how late a 50 ms sleep wakes),
which is the load generator's share of every latency it reports.

The users live in loadtests/users/, one concern a module: `options` (the command line),
`tables` (the tables a process's users form), `link` (a socket and its reader greenlet),
`listening` (what a socket tells its player), `player` (the user and the task that plays),
`samples` (the raw CSV), `soak_board` (what the soak reads and orders), `hooks` (Locust's
events). Locust and gevent live only there, in this file and in the process that runs them
(gevent monkey-patches the standard library); nothing else imports them. Its web UI (the
master's, in distributed mode) also serves Locust's figures as Prometheus text at /metrics
(loadtests/locust_metrics.py), for the chart's ServiceMonitor.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from locust import LoadTestShape

from loadtests.evening_curve import ENV as EVENING_ENV
from loadtests.evening_curve import SPAWN_RATE, Curve
from loadtests.users import hooks
from loadtests.users.player import QuatroPlayer

__all__ = ["QuatroPlayer"]  # what Locust runs

hooks.install()

# -- a load shape driven from outside (python -m loadtests.capacity) ------------------------------
if os.environ.get("QUATRO_LOAD_CONTROL"):

    class ControlledShape(LoadTestShape):
        """Reads the target from a JSON file each tick: {"users": n, "spawn_rate": r} or
        {"stop": true}. The capacity script raises the target one step at a time."""

        path = Path(os.environ["QUATRO_LOAD_CONTROL"])

        def tick(self) -> tuple[int, float] | None:
            try:
                data = json.loads(self.path.read_text())
            except (OSError, ValueError):
                return (0, 1.0)
            if data.get("stop"):
                return None
            return (int(data.get("users", 0)), float(data.get("spawn_rate", 10.0)))


# -- an evening's curve (python -m loadtests.evening, the chart's Locust job) ---------------------
elif os.environ.get(EVENING_ENV):

    class EveningShape(LoadTestShape):
        """Players over an evening (loadtests/evening_curve.py): a few, the peak, a few."""

        curve = Curve.parse(os.environ[EVENING_ENV], int(os.environ.get("QUATRO_SEATS", "4")))

        def tick(self) -> tuple[int, float] | None:
            n = self.curve.players(self.get_run_time())  # type: ignore[no-untyped-call]
            return None if n is None else (n, SPAWN_RATE)
