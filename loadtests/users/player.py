"""One Locust user is one human player at one seat (loadtests/locustfile.py says how they play
and what they measure): its life cycle, its REST calls and the table it forms with the other
users of its Locust process, its socket (dropped and taken again now and then), and the task
that plays: one command in flight at a time, chosen by the engine's smart policy plus what a
human adds (a vote, a rematch). What the socket tells it is loadtests/users/listening.py."""

from __future__ import annotations

import itertools
import random
import time
from typing import Any

import gevent
from gevent.event import Event
from locust import HttpUser, constant, task
from locust.env import Environment

from engine.bots import Bot
from engine.commands import (
    CallContre,
    CallQuatro,
    CastVote,
    Command,
    NextRound,
    Rematch,
    Swap,
)
from engine.phase import Phase
from engine.wire import client_frame
from loadtests.frames import hello, ws_url
from loadtests.users.link import ECHO_WAIT_S, ECHOES, Link, Pending
from loadtests.users.listening import Listening
from loadtests.users.options import ExchangeError, Options, now_ms
from loadtests.users.samples import SAMPLES
from loadtests.users.soak_board import HOST_TURN, SOAK
from loadtests.users.tables import GROUP_WAIT_S, LOBBY, SEEN, Group


class QuatroPlayer(HttpUser, Listening):
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
        self.arrived: float | None = None  # when it asked for its seat, until welcomed
        self.public = False  # at a Play now table: no host, no rematch

    # -- Locust's life cycle ------------------------------------------------------------------
    def on_start(self) -> None:
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
        if self.opts.quick_share and self.rng.random() < self.opts.quick_share:
            self._play_now()
            return
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

    def _play_now(self) -> None:
        """Play now: a seat at a public table, which starts by itself once full (or with bots
        after its fill wait); its players leave it when its match is over."""
        self.table_group, self.public = None, True
        self.arrived = time.perf_counter()
        r = self.client.post(
            self.base + "/api/quickplay",
            json={"players": self.opts.players},
            headers=self.auth,
            name="POST /api/quickplay",
        )
        if r.status_code in (429, 503):  # documented: try again after Retry-After
            gevent.sleep(float(r.headers.get("Retry-After", "1")))
            return
        r.raise_for_status()
        self.code, self.seat = str(r.json()["code"]), int(r.json()["seat"])
        try:
            self._connect("hello")
            self._play()
        finally:
            self._disconnect()

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
    def connected(self) -> bool:
        """Welcomed on a socket still open."""
        link = self.link
        return link is not None and link.welcomed and not link.closed.is_set()

    @property
    def auth(self) -> dict[str, str]:
        # A fresh connection per call: a kept-alive one that the server is just closing (idle
        # timeout) fails a POST that cannot be retried blindly.
        return {"Authorization": f"Bearer {self.token}", "Connection": "close"}

    def _sit(self, group: Group, seat: int) -> None:
        self.arrived = time.perf_counter()
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
        self.arrived = time.perf_counter()  # a friend arrives when the invite reaches them
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
        self.arrived, self.public = None, False
        self._schedule_drop()

    def _schedule_drop(self) -> None:
        rate = self.opts.drop_rate / 60.0
        self.next_drop = time.monotonic() + self.rng.expovariate(rate) if rate > 0 else float("inf")

    def _connect(self, kind: str) -> None:
        started = time.perf_counter()
        tries = max(1, len(self.opts.hosts))
        for attempt in range(tries):
            try:
                link = Link(self, ws_url(self.base), kind, self.port)
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
        link.send(hello(self.token, self.code, "hello"))
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
        if self.over_at is not None and (self.opts.match_rounds or self.public):
            # The match ended before the rounds did, or a public table's: open a new table.
            self.leave = True
            return None
        options: list[tuple[int, Command]] = []
        intent = bot.decide(now)
        # A public table's next round comes by its clock: nobody may ask for it.
        if intent is not None and not (self.public and isinstance(intent.command, NextRound)):
            options.append((intent.at, intent.command))
        if self.vote_at is not None:
            options.append((self.vote_at, CastVote(seat=self.seat, accept=self.vote_accept)))
        if self.over_at is not None and self.seat == 0:
            options.append((self.over_at, Rematch(seat=self.seat)))
        return min(options, key=lambda o: o[0]) if options else None
