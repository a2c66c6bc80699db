"""One player's WebSocket under Locust (websocket-client, gevent-patched): one reader greenlet
per socket that never stops reading, and what a command in flight is waiting for."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

import gevent
import websocket
from gevent.event import Event

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
from loadtests.frames import Order, encode


class Reader(Protocol):
    """Whom a socket's frames go to (loadtests/users/listening.py): in the reader greenlet."""

    wake: Event

    def on_frame(self, link: Link, frame: dict[str, Any]) -> None: ...

    def on_lost(self, link: Link, exc: BaseException) -> None: ...


CONNECT_TIMEOUT_S = 15.0


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

    def __init__(self, player: Reader, url: str, kind: str, port: str) -> None:
        self.player = player
        self.kind = kind  # "hello" or "reconnect": the name of the welcome exchange
        self.port = port  # its gateway's, as the soak names gateways
        self.ws = websocket.create_connection(
            url, timeout=CONNECT_TIMEOUT_S, enable_multithread=True, skip_utf8_validation=True
        )
        self.ws.settimeout(None)
        self.order = Order()  # its events, one after another
        self.welcomed = False
        self.closing = False
        self.closed = Event()
        self.reader = gevent.spawn(self._read)

    def send(self, frame: dict[str, Any]) -> None:
        self.ws.send(encode(frame))

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
