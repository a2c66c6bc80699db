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

Locust and gevent live only in this file and the process that runs it (gevent monkey-patches
the standard library); nothing imports it. Its web UI (the master's, in distributed mode) also
serves Locust's figures as Prometheus text at /metrics (loadtests/locust_metrics.py), for the
chart's ServiceMonitor.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gevent
import websocket
from gevent.event import AsyncResult, Event
from locust import HttpUser, LoadTestShape, constant, events, task
from locust.env import Environment
from locust.runners import MasterRunner

from engine.bots import Bot, make_bot
from engine.commands import (
    CallContre,
    CallQuatro,
    CastVote,
    ChooseSign,
    Command,
    NextRound,
    Ready,
    Rematch,
    RequestVote,
    SetFloor,
    Swap,
)
from engine.config import Timings
from engine.phase import Phase
from engine.wire import client_frame
from loadtests.locust_metrics import install as install_metrics_route

ANSWER_TIMEOUT_S = 10.0  # an answer later than this is a failure
GROUP_WAIT_S = 120.0  # a group that does not fill (or connect) within this is abandoned
CONNECT_TIMEOUT_S = 15.0
SEEN_TTL_S = 30.0
FLUSH_EVERY_S = 1.0
GAUGE_EVERY_S = 2.0
LAG_TICK_S = 0.05  # the loop-lag probe sleeps this long and records how late it woke

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


# -- command line ---------------------------------------------------------------------------------
def _options(parser: Any) -> None:
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
        )


# -- raw samples, for plots and the capacity steps --------------------------------------------
class Samples:
    """Every request event and a few gauges, appended to one CSV per process:
    `t (epoch s), kind (WS/REFUSED/POST/…/LAG/gauge:<pid>), name, value (ms or count), failed
    (0/1), since` — `since`: when the sample's table went into play (epoch s; empty before, or
    for what no table owns)."""

    def __init__(self, directory: str) -> None:
        self.path = Path(directory) / f"samples-{os.getpid()}.csv" if directory else None
        self.buf: list[str] = []
        self._flusher: Any = None
        self._lag: Any = None

    def start(self) -> None:
        if self.path is None or self._flusher is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._flusher = gevent.spawn(self._run)
        self._lag = gevent.spawn(self._probe_lag)

    def add(
        self, kind: str, name: str, value: float, failed: bool, since: float | None = None
    ) -> None:
        if self.path is not None:
            tail = "" if since is None else f"{since:.3f}"
            self.buf.append(f"{time.time():.3f},{kind},{name},{value:.2f},{int(failed)},{tail}\n")

    def _probe_lag(self) -> None:
        """How late this process's event loop wakes a greenlet: every latency measured here
        includes that much of the generator's own delay, which no player would see."""
        while True:
            asked = time.perf_counter()
            gevent.sleep(LAG_TICK_S)
            late = (time.perf_counter() - asked - LAG_TICK_S) * 1000
            self.add("LAG", "loop", max(0.0, late), False)

    def flush(self) -> None:
        if self.path is None or not self.buf:
            return
        lines, self.buf = self.buf, []
        with self.path.open("a", encoding="utf-8") as f:
            f.writelines(lines)

    def _run(self) -> None:
        last_gauge = 0.0
        while True:
            gevent.sleep(FLUSH_EVERY_S)
            t = time.monotonic()
            if t - last_gauge >= GAUGE_EVERY_S:
                last_gauge = t
                kind = f"gauge:{os.getpid()}"
                self.add(kind, "tables_live", LOBBY.live_tables(), False)
                self.add(kind, "players_connected", LOBBY.connected, False)
                SEEN.expire()
            self.flush()


SAMPLES: Samples | None = None


def _on_init(environment: Environment, **_: Any) -> None:
    global SAMPLES, SOAK
    # Locust's figures as Prometheus text on the web UI (the master's, in distributed mode).
    install_metrics_route(environment)
    if isinstance(environment.runner, MasterRunner):
        return  # the workers play and write; the master only aggregates
    SAMPLES = Samples(Options.of(environment).samples_dir)
    SOAK = SoakBoard(Options.of(environment).soak_dir)


def _on_request(
    request_type: str,
    name: str,
    response_time: float,
    exception: BaseException | None = None,
    context: dict[str, Any] | None = None,
    **_: Any,
) -> None:
    if SAMPLES is not None:
        since = (context or {}).get("live_since")
        SAMPLES.add(request_type, name, response_time or 0.0, exception is not None, since)


def _on_quit(environment: Environment, **_: Any) -> None:
    if SAMPLES is not None:
        SAMPLES.flush()
    SOAK.flush()


def _listen(hook: Any, handler: Callable[..., None]) -> None:
    hook.add_listener(handler)  # locust's hooks are untyped


_listen(events.init_command_line_parser, _options)
_listen(events.init, _on_init)
_listen(events.request, _on_request)
_listen(events.quitting, _on_quit)


# -- tables formed by the users of this process ----------------------------------------------
@dataclass
class Group:
    """The users of one table. Seat i is the i-th member; member 0 creates and hosts."""

    players: int
    members: int = 0
    code: AsyncResult = field(default_factory=AsyncResult)
    connected: set[int] = field(default_factory=set)
    all_connected: Event = field(default_factory=Event)
    started: bool = False
    live_since: float | None = None  # epoch s: when its host started the match
    closed: bool = False


class Lobby:
    def __init__(self) -> None:
        self.forming: dict[int, Group] = {}
        self.groups: list[Group] = []
        self.connected = 0  # sockets past welcome in this process

    def join(self, players: int) -> tuple[Group, int]:
        g = self.forming.get(players)
        if g is None or g.members >= players or g.closed:
            g = self.forming[players] = Group(players)
            self.groups.append(g)
        seat = g.members
        g.members += 1
        return g, seat

    def live_tables(self) -> int:
        self.groups = [g for g in self.groups if not g.closed]
        return sum(1 for g in self.groups if g.started)


LOBBY = Lobby()


class SeenBoard:
    """Swaps sent by users of this process, so that the other seats' sockets can time when they
    see them: key (table, seat, card put down, slot, card taken) → when it was sent."""

    def __init__(self) -> None:
        self.sent: dict[tuple[str, int, str, int, str], float] = {}

    def put(self, key: tuple[str, int, str, int, str]) -> None:
        self.sent[key] = time.perf_counter()

    def drop(self, key: tuple[str, int, str, int, str]) -> None:
        self.sent.pop(key, None)

    def seen(self, key: tuple[str, int, str, int, str]) -> float | None:
        at = self.sent.get(key)
        return None if at is None else (time.perf_counter() - at) * 1000

    def expire(self) -> None:
        limit = time.perf_counter() - SEEN_TTL_S
        self.sent = {k: v for k, v in self.sent.items() if v >= limit}


SEEN = SeenBoard()


# -- what the soak (loadtests/soak.py) reads and writes ---------------------------------------
# Phases whose clock moves by itself: a table connected and silent in one of them is stuck.
MOVING_PHASES = frozenset({Phase.SIGNING, Phase.PLAYING, Phase.PAUSE})


@dataclass
class TableWatch:
    """What this process's users saw of one table lately."""

    phase: str = "lobby"
    last_event: float = 0.0  # time.time() of the last event any of its users received
    last_at: int = 0  # the latest `at` (the table's own clock, ms) among those events
    deadline: int | None = None  # when the phase's clock is due to move (server ms)


class SoakBoard:
    """The soak's view of this process (`--soak-dir`): every score its users were shown
    (ledger-<pid>.jsonl: welcomes, reveals, overs and match starts, with the table's `at`), each
    table's last event and how many of its seats are connected through which gateway
    (tables-<pid>.json, rewritten every second), and the soak's orders (control.json: a
    reconnect storm `{"storm": {"id", "port", "within"}}`)."""

    def __init__(self, directory: str) -> None:
        self.dir = Path(directory) if directory else None
        self.lines: list[str] = []
        self.tables: dict[str, TableWatch] = {}
        self.users: set[QuatroPlayer] = set()
        self.storm: tuple[int, str, float] = (0, "", 0.0)  # id, port, within (s)
        self._runner: Any = None

    def start(self) -> None:
        if self.dir is None or self._runner is not None:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        self._runner = gevent.spawn(self._run)

    def note(self, code: str, seat: int, kind: str, e: dict[str, Any], **extra: Any) -> None:
        if self.dir is None:
            return
        line = {"t": round(time.time(), 3), "code": code, "seat": seat, "kind": kind}
        line["at"] = int(e.get("at") or 0)
        line.update(extra)
        self.lines.append(json.dumps(line, separators=(",", ":")) + "\n")

    def event(self, code: str, phase: Phase, e: dict[str, Any]) -> None:
        if self.dir is None:
            return
        w = self.tables.setdefault(code, TableWatch())
        w.phase = str(phase)
        w.last_event = time.time()
        w.last_at = max(w.last_at, int(e.get("at") or 0))
        kind = e.get("type")
        if kind == "welcome":
            w.deadline = e["table"].get("deadline")
        elif kind in ("signing", "round", "pause"):
            w.deadline = e.get("deadline")
        elif kind == "over":
            w.deadline = None

    def flush(self) -> None:
        if self.dir is None:
            return
        if self.lines:
            lines, self.lines = self.lines, []
            with (self.dir / f"ledger-{os.getpid()}.jsonl").open("a", encoding="utf-8") as f:
                f.writelines(lines)
        connected: dict[str, dict[str, int]] = {}
        for u in self.users:
            link = u.link
            if link is not None and link.welcomed and not link.closed.is_set() and u.code:
                ports = connected.setdefault(u.code, {})
                ports[u.port] = ports.get(u.port, 0) + 1
        state = {
            "t": time.time(),
            "tables": {
                code: {
                    "phase": w.phase,
                    "last_event": w.last_event,
                    "last_at": w.last_at,
                    "deadline": w.deadline,
                    "connected": connected.get(code, {}),
                }
                for code, w in self.tables.items()
            },
        }
        path = self.dir / f"tables-{os.getpid()}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(path)

    def _read_control(self) -> None:
        assert self.dir is not None
        try:
            data = json.loads((self.dir / "control.json").read_text())
        except (OSError, ValueError):
            return
        storm = data.get("storm") or {}
        if int(storm.get("id", 0)) > self.storm[0]:
            self.storm = (int(storm["id"]), str(storm["port"]), float(storm.get("within", 2.0)))

    def _run(self) -> None:
        while True:
            gevent.sleep(0.5)
            self._read_control()
            self.flush()


SOAK = SoakBoard("")
HOST_TURN = itertools.count()  # which of `--hosts` the next user starts on


# -- one player's socket ----------------------------------------------------------------------
@dataclass
class Pending:
    name: str  # the exchange's name, e.g. "swap→ack"
    command: Command
    sent: float  # perf_counter
    key: tuple[str, int, str, int, str] | None = None


# The event that shows a command took effect, and whether it names the sender's seat. The answer
# comes first and the events it caused right after it (PROTOCOL.md), so a user sends nothing new
# until both are in: the policy plans from its own view, which only events update.
ECHOES: dict[type[Command], tuple[frozenset[str], bool]] = {
    Ready: (frozenset({"ready"}), True),
    ChooseSign: (frozenset({"sign"}), False),
    Swap: (frozenset({"swapped"}), True),
    SetFloor: (frozenset({"floor"}), True),
    CallQuatro: (frozenset({"reveal"}), False),
    CallContre: (frozenset({"reveal"}), False),
    RequestVote: (frozenset({"vote", "reshuffled", "vote_result"}), False),
    CastVote: (frozenset({"voted", "vote_result"}), False),
    NextRound: (frozenset({"signing"}), False),
    Rematch: (frozenset({"signing"}), False),
}
ECHO_WAIT_S = 2.0


class Link:
    """One WebSocket and its reader greenlet. The reader folds every frame into the player's
    state and wakes the player's task; only the task sends commands."""

    def __init__(self, player: QuatroPlayer, url: str, kind: str) -> None:
        self.player = player
        self.kind = kind  # "hello" or "reconnect": the name of the welcome exchange
        self.ws = websocket.create_connection(
            url, timeout=CONNECT_TIMEOUT_S, enable_multithread=True, skip_utf8_validation=True
        )
        self.ws.settimeout(None)
        self.last_seq = 0
        self.welcomed = False
        self.closing = False
        self.closed = Event()
        self.reader = gevent.spawn(self._read)

    def send(self, frame: dict[str, Any]) -> None:
        self.ws.send(json.dumps(frame, ensure_ascii=False, separators=(",", ":")))

    def close(self) -> None:
        self.closing = True
        try:
            self.ws.close(timeout=1)
        except Exception:
            self.ws.abort()  # type: ignore[no-untyped-call]
        self.reader.kill(block=False)

    def _read(self) -> None:
        try:
            while True:
                text = self.ws.recv()
                if not text:
                    break
                self.player.on_frame(self, json.loads(text))
        except Exception as exc:
            if not self.closing:
                self.player.on_lost(self, exc)
        finally:
            self.closed.set()
            self.player.wake.set()


class QuatroPlayer(HttpUser):
    """One human player at one seat (see the module's docstring)."""

    wait_time = constant(0)

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)  # type: ignore[no-untyped-call]
        self.opts = Options.of(environment)
        self.rng = random.Random()
        self.wake = Event()
        self.player_name = f"load{self.rng.randrange(10**6)}"
        self.token = ""
        self.link: Link | None = None
        self.bot: Bot | None = None
        self.table_group: Group | None = None
        self.code = ""
        self.seat = -1
        self.pending: dict[str, Pending] = {}
        self.ids = itertools.count(1)
        self.hello_sent = 0.0
        self.call_sent: float | None = None
        self.rounds = 0
        self.phase = Phase.LOBBY
        self.over_at: int | None = None
        self.vote_at: int | None = None
        self.vote_accept = False
        self.next_drop = float("inf")
        self.leave = False
        self.echo: tuple[frozenset[str], bool] | None = None
        self.echo_until = 0.0
        # `--hosts`: the gateway this user talks to now, an index into opts.hosts.
        self.host_index = next(HOST_TURN) % len(self.opts.hosts) if self.opts.hosts else 0
        self.storm_seen = SOAK.storm[0]  # only storms ordered after this user started
        self.quick_return = False

    # -- Locust's life cycle ------------------------------------------------------------------
    def on_start(self) -> None:
        if SAMPLES is not None:
            SAMPLES.start()
        SOAK.start()
        SOAK.users.add(self)
        r = self.client.post(
            self.base + "/api/sessions", json={"name": self.player_name}, name="POST /api/sessions"
        )
        r.raise_for_status()
        self.token = r.json()["token"]

    def on_stop(self) -> None:
        SOAK.users.discard(self)
        self._disconnect()
        if self.table_group is not None:
            self.table_group.closed = True

    @task
    def play_a_table(self) -> None:
        """Sit at one table and play there until the group leaves it (or the test ends)."""
        self._reset()
        group, seat = LOBBY.join(self.opts.players)
        self.table_group, self.seat = group, seat
        try:
            self._sit(group, seat)
            self._connect("hello")
            self._wait_for_start(group, seat)
            self._play()
        finally:
            self._disconnect()
            group.closed = True  # the others of this table leave too: no seat waits forever

    # -- REST and grouping --------------------------------------------------------------------
    @property
    def base(self) -> str:
        """The gateway this user talks to: one of `--hosts`, or Locust's `--host`."""
        if self.opts.hosts:
            return self.opts.hosts[self.host_index]
        return str(self.host or self.environment.host or "").rstrip("/")

    @property
    def port(self) -> str:
        return self.base.rsplit(":", 1)[-1]

    @property
    def auth(self) -> dict[str, str]:
        # A fresh connection per call: a kept-alive one that the server is just closing (idle
        # timeout) fails a POST that cannot be retried blindly.
        return {"Authorization": f"Bearer {self.token}", "Connection": "close"}

    def _sit(self, group: Group, seat: int) -> None:
        if seat == 0:
            body: dict[str, Any] = {"players": group.players}
            if self.opts.time_scale != 1.0:
                body["scenario"] = {
                    "seed": self.rng.randrange(2**31),
                    "time_scale": self.opts.time_scale,
                }
            r = self.client.post(
                self.base + "/api/tables", json=body, headers=self.auth, name="POST /api/tables"
            )
            if r.status_code != 201:
                group.code.set_exception(ExchangeError(f"create: {r.status_code}"))
                r.raise_for_status()
            self.code = str(r.json()["code"])
            group.code.set(self.code)
            SOAK.note(self.code, seat, "created", {})
            return
        self.code = str(group.code.get(timeout=GROUP_WAIT_S))
        r = self.client.post(
            f"{self.base}/api/tables/{self.code}/seats/{seat}",
            headers=self.auth,
            name="POST /api/tables/[code]/seats/[seat]",
        )
        r.raise_for_status()

    def _wait_for_start(self, group: Group, seat: int) -> None:
        if seat != 0:
            return
        deadline = time.monotonic() + GROUP_WAIT_S
        while not group.all_connected.wait(timeout=1.0):
            if group.closed:
                raise ExchangeError("a player of this table left before the start")
            if time.monotonic() > deadline:
                raise ExchangeError("the table's seats did not all connect in time")
        r = self.client.post(
            f"{self.base}/api/tables/{self.code}/start",
            headers=self.auth,
            name="POST /api/tables/[code]/start",
        )
        r.raise_for_status()
        group.started = True
        group.live_since = time.time()

    # -- the socket ---------------------------------------------------------------------------
    def _reset(self) -> None:
        self.bot = None
        self.pending = {}
        self.call_sent = None
        self.rounds = 0
        self.phase = Phase.LOBBY
        self.over_at = None
        self.vote_at = None
        self.leave = False
        self._schedule_drop()

    def _schedule_drop(self) -> None:
        rate = self.opts.drop_rate / 60.0
        self.next_drop = time.monotonic() + self.rng.expovariate(rate) if rate > 0 else float("inf")

    def _ws_url(self) -> str:
        host = self.base
        return host.replace("https://", "wss://").replace("http://", "ws://").rstrip("/") + "/ws"

    def _connect(self, kind: str) -> None:
        started = time.perf_counter()
        tries = max(1, len(self.opts.hosts))
        for attempt in range(tries):
            try:
                link = Link(self, self._ws_url(), kind)
                break
            except OSError as exc:
                if attempt + 1 >= tries:
                    self._fire(f"{kind}→welcome", (time.perf_counter() - started) * 1000, exc)
                    raise
                # Its gateway is gone: come back through the next one, as a browser behind a
                # load balancer would. The soak judges these against its faults.
                self._lost(f"connect:refused@{self.port}")
                self.host_index = (self.host_index + 1) % len(self.opts.hosts)
        self.link = link
        self.hello_sent = time.perf_counter()
        link.send({"type": "hello", "id": "hello", "token": self.token, "table": self.code})
        deadline = time.monotonic() + self.opts.answer_timeout
        while not link.welcomed and not link.closed.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                late = ExchangeError("no welcome")
                self._fire(f"{kind}→welcome", self.opts.answer_timeout * 1000, late)
                raise late
            self.wake.clear()
            self.wake.wait(timeout=min(left, 1.0))
        if not link.welcomed:
            raise ExchangeError("closed before welcome")

    def _disconnect(self) -> None:
        link, self.link = self.link, None
        if link is not None:
            if link.welcomed:
                LOBBY.connected -= 1
            link.close()
        for p in self.pending.values():
            if p.key is not None:
                SEEN.drop(p.key)
        self.pending = {}
        self.call_sent = None
        self.echo = None

    def _context(self) -> dict[str, Any]:
        group = self.table_group
        return {"live_since": None if group is None else group.live_since}

    def _fire(self, name: str, ms: float, exc: BaseException | None = None) -> None:
        self.environment.events.request.fire(
            request_type="WS",
            name=name,
            response_time=ms,
            response_length=0,
            exception=exc,
            context=self._context(),
        )

    def _lost(self, name: str) -> None:
        """A socket or a connection lost (with `--hosts`): not a failure by itself; the soak
        counts it as one when no fault of its own explains it."""
        self.environment.events.request.fire(
            request_type="LOST",
            name=name,
            response_time=0.0,
            response_length=0,
            exception=None,
            context=self._context(),
        )

    def _refused(self, name: str, ms: float) -> None:
        self.environment.events.request.fire(
            request_type="REFUSED",
            name=name,
            response_time=ms,
            response_length=0,
            exception=None,
            context=self._context(),
        )

    # -- frames (in the reader greenlet; nothing here yields) ---------------------------------
    def on_frame(self, link: Link, frame: dict[str, Any]) -> None:
        if link is not self.link:
            return
        if "seq" in frame:
            seq = int(frame["seq"])
            if seq != link.last_seq + 1:
                self._fire("ws:seq", 0.0, ExchangeError(f"seq {seq} after {link.last_seq}"))
            link.last_seq = seq
            self._on_event(link, frame)
            SOAK.event(self.code, self.phase, frame)
        else:
            self._on_answer(frame)
        self.wake.set()

    def on_lost(self, link: Link, exc: BaseException) -> None:
        if link is self.link and self.opts.hosts:
            self._lost(f"ws:lost@{self.port}")
        elif link is self.link:
            code = getattr(link.ws, "status", None)
            self._fire("ws:closed", 0.0, ExchangeError(f"socket lost ({exc!r}, status {code})"))

    def _on_event(self, link: Link, e: dict[str, Any]) -> None:
        kind = e.get("type")
        now = now_ms()
        if kind == "welcome":
            if not link.welcomed:
                link.welcomed = True
                LOBBY.connected += 1
                self._fire(f"{link.kind}→welcome", (time.perf_counter() - self.hello_sent) * 1000)
                if self.table_group is not None and link.kind == "hello":
                    self.table_group.connected.add(self.seat)
                    if len(self.table_group.connected) >= self.table_group.players:
                        self.table_group.all_connected.set()
            table = e["table"]
            self.phase = Phase(table["phase"])
            SOAK.note(
                self.code,
                self.seat,
                "welcome",
                e,
                scores=table.get("scores"),
                round=table.get("round"),
                phase=table["phase"],
            )
            if self.bot is None:
                self.bot = make_bot(
                    "smart",
                    int(e["you"]["seat"]),
                    int(table["players"]),
                    seed=self.rng.randrange(2**31),
                    speed=self.opts.pace,
                    timings=Timings.scaled(self.opts.time_scale),
                )
            self.bot.sync(table, now)
            return
        if self.bot is None:
            return
        self.bot.observe(e, now)
        echo = self.echo
        if echo is not None and kind in echo[0] and (not echo[1] or e.get("seat") == self.seat):
            self.echo = None
        if kind == "swapped":
            seat = int(e["seat"])
            if seat != self.seat:
                key = (
                    self.code,
                    seat,
                    str(e["placed"]["id"]),
                    int(e["slot"]),
                    str(e["taken"]["id"]),
                )
                ms = SEEN.seen(key)
                if ms is not None:
                    self._fire("swap→seen", ms)
        elif kind == "reveal":
            SOAK.note(self.code, self.seat, "reveal", e, scores=e.get("scores"))
            self.phase = Phase.PAUSE
            self.rounds += 1
            if self.call_sent is not None and e.get("by") == self.seat:
                self._fire("call→reveal", (time.perf_counter() - self.call_sent) * 1000)
            self.call_sent = None
            self.vote_at = None
            limit = self.opts.match_rounds
            if limit and self.rounds >= limit:
                self.leave = True
        elif kind == "vote":
            voters = [int(v) for v in e.get("voters", [])]
            if self.seat in voters:
                self.vote_at = now + self.bot.pace.reaction(self.rng)
                self.vote_accept = self.rng.random() < self.opts.vote_accept
        elif kind == "vote_result":
            self.vote_at = None
        elif kind == "over":
            SOAK.note(self.code, self.seat, "over", e, scores=e.get("scores"))
            self.phase = Phase.OVER
            self.over_at = now + self.bot.pace.linger(self.rng)
        elif kind == "signing":
            SOAK.note(self.code, self.seat, "signing", e, round=e.get("round"))
            self.phase = Phase.SIGNING
            self.over_at = None
        elif kind == "round":
            self.phase = Phase.PLAYING

    def _on_answer(self, a: dict[str, Any]) -> None:
        fid = a.get("id")
        p = self.pending.pop(str(fid), None) if fid is not None else None
        if p is None:
            if a.get("type") == "error":
                self._fire("ws:error", 0.0, ExchangeError(f"unsolicited error {a.get('code')}"))
            return
        ms = (time.perf_counter() - p.sent) * 1000
        if a.get("type") != "error":
            self._fire(p.name, ms)
            return
        self.echo = None
        if p.key is not None:
            SEEN.drop(p.key)
        if p.name.startswith(("quatro", "contre")):
            self.call_sent = None
        code = str(a.get("code"))
        verb = p.name.split("→", 1)[0]
        if self.bot is not None and not isinstance(p.command, CastVote | Rematch):
            self.bot.refused(p.command, a, now_ms())
        if code in GAME_REFUSALS:
            self._refused(f"{verb}:{code}", ms)
        else:
            self._fire(p.name, ms, ExchangeError(f"{code}: {a.get('message')}"))

    # -- the player's task --------------------------------------------------------------------
    def _send(self, command: Command) -> None:
        assert self.link is not None
        frame = dict(client_frame(command))
        fid = str(next(self.ids))
        verb = str(frame["type"])
        key = None
        if isinstance(command, Swap):
            key = (self.code, self.seat, command.card, command.slot, command.expect)
            SEEN.put(key)
        self.pending[fid] = Pending(f"{verb}→ack", command, time.perf_counter(), key)
        self.echo = ECHOES.get(type(command))
        self.echo_until = time.monotonic() + ECHO_WAIT_S
        if isinstance(command, CallQuatro | CallContre):
            self.call_sent = time.perf_counter()
        self.link.send({**frame, "id": fid})

    def _check_answers(self) -> None:
        limit = time.perf_counter() - self.opts.answer_timeout
        for fid, p in list(self.pending.items()):
            if p.sent < limit:
                del self.pending[fid]
                if p.key is not None:
                    SEEN.drop(p.key)
                self._fire(p.name, self.opts.answer_timeout * 1000, ExchangeError("no answer"))

    def _drop_and_come_back(self) -> None:
        self._disconnect()
        if self.quick_return:
            self.quick_return = False
        else:
            gevent.sleep(self.rng.uniform(0.5, 3.0))
        self._connect("reconnect")
        self._schedule_drop()

    def _play(self) -> None:
        group = self.table_group
        while not self.leave:
            if group is not None and group.closed:
                # A player of this table left for good (an error): the table breaks up and its
                # players form new ones, so no group ever waits for a seat nobody will take.
                return
            link = self.link
            if link is None or link.closed.is_set():
                # The server closed us (or the network did): come back like a browser would.
                self._disconnect()
                gevent.sleep(self.rng.uniform(0.5, 2.0))
                self._connect("reconnect")
                continue
            storm = SOAK.storm
            if storm[0] > self.storm_seen:
                self.storm_seen = storm[0]
                if storm[1] == self.port:
                    # The soak's reconnect storm: every player of this gateway drops within
                    # `within` seconds and comes straight back.
                    self.next_drop = time.monotonic() + self.rng.uniform(0.0, storm[2])
                    self.quick_return = True
            if time.monotonic() >= self.next_drop:
                self._drop_and_come_back()
                continue
            self._check_answers()
            self.wake.clear()
            if self.pending or (self.echo is not None and time.monotonic() < self.echo_until):
                self.wake.wait(timeout=0.25)  # one command in flight, as a person plays
                continue
            now = now_ms()
            nxt = self._next(now)
            if nxt is not None and nxt[0] <= now:
                command = nxt[1]
                if self.bot is not None and not isinstance(command, CastVote | Rematch):
                    self.bot.sent(command, now)
                self._send(command)
                if isinstance(command, CastVote):
                    self.vote_at = None
                elif isinstance(command, Rematch):
                    self.over_at = None
                continue
            wait = 1.0 if nxt is None else min((nxt[0] - now) / 1000, 1.0)
            self.wake.wait(timeout=wait)

    def _next(self, now: int) -> tuple[int, Command] | None:
        """The earliest of the policy's intent and what a human adds: a vote, a rematch."""
        bot = self.bot
        if bot is None:
            return None
        if self.over_at is not None and self.opts.match_rounds:
            self.leave = True  # the match ended before the rounds did: open a new table
            return None
        options: list[tuple[int, Command]] = []
        intent = bot.decide(now)
        if intent is not None:
            options.append((intent.at, intent.command))
        if self.vote_at is not None:
            options.append((self.vote_at, CastVote(seat=self.seat, accept=self.vote_accept)))
        if self.over_at is not None and self.seat == 0:
            options.append((self.over_at, Rematch(seat=self.seat)))
        return min(options, key=lambda o: o[0]) if options else None


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
