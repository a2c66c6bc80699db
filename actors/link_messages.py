"""The data plane's own messages (actors/link_server.py ↔ gateway/table_link.py): a
connection's hello and its answer, keep-alives, calls and answers by id, and the end of a
connection. They travel as JSON lines only (actors/codec.py), never pickled by Ray, so they may
move between modules freely; what crosses Ray (the requests and replies inside a `Call` and an
`Answer`, a `Batch` of events) is actors/protocol.py's, where a pickle of another release finds
it."""

from __future__ import annotations

from dataclasses import dataclass

from actors.protocol import Batch, Reply, Request


@dataclass(frozen=True, slots=True)
class Hello:
    """The first line of a connection: nothing is served before it checks out."""

    secret: str
    gateway: str
    table: str  # the code the gateway expects: a port reused by another table is told apart
    incarnation: str  # the actor process the gateway was told about


@dataclass(frozen=True, slots=True)
class Welcome:
    incarnation: str


@dataclass(frozen=True, slots=True)
class Refused:
    """Said once before the actor closes a connection whose hello failed."""

    reason: str


@dataclass(frozen=True, slots=True)
class Follow:
    """Send me every published event after `after` (-1: from now on)."""

    after: int


@dataclass(frozen=True, slots=True)
class Call:
    rid: int
    request: Request


@dataclass(frozen=True, slots=True)
class Answer:
    rid: int
    reply: Reply


@dataclass(frozen=True, slots=True)
class Ping:
    n: int


@dataclass(frozen=True, slots=True)
class Pong:
    n: int


@dataclass(frozen=True, slots=True)
class Bye:
    """The gateway has no player left at this table: not a fault, nothing to clean up."""


@dataclass(frozen=True, slots=True)
class Gone:
    """The table stopped for good (idle, or lost)."""


Message = Hello | Welcome | Refused | Follow | Batch | Call | Answer | Ping | Pong | Bye | Gone
