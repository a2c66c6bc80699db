"""What gateways and table actors say to each other, typed, and how it travels.

The same messages cross both planes. On the data plane (a TCP connection per gateway and table,
`actors/link_server.py` ↔ `gateway/table_link.py`) each message is one line of JSON: measured
against msgpack by `python -m loadtests.link_codec`, JSON costs about the same for these small
messages and needs no other library, and a line can be read in a packet capture. On the control
plane (Ray calls: open, restore, stop, admin) the same dataclasses travel pickled.

A gateway never names the seat a command acts for: the actor finds it from the player, so a
gateway cannot act for a seat its player does not hold (R30).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from engine.commands import Command
from engine.errors import ErrorBody as ErrorBody  # the one refusal type, the engine's
from engine.errors import Refusal
from engine.events import Scope
from engine.wire import ASKER, command_from_frame, frame_fields, kind_of


class Entry(NamedTuple):
    """One published event. `holders` are the players a private event (scope seat or team) may
    reach: those who held its seats when it happened; () for public events (R30). `origin` is
    the gateway whose command caused it: that gateway gets it in the command's reply."""

    seq: int
    scope: Scope
    scope_index: int  # which seat or team, for scopes seat and team
    wire: dict[str, Any]
    at: int
    origin: str
    holders: tuple[str, ...] = ()


def entry_from_json(raw: Any) -> Entry:
    """An entry read back from JSON (Redis, or the data plane), which turns tuples into lists.
    Entries saved before holders existed get none: their private events then reach nobody
    rather than anybody."""
    seq, scope, index, wire, at, origin = raw[:6]
    holders = tuple(str(p) for p in raw[6]) if len(raw) > 6 else ()
    if scope not in ("all", "seat", "team", "watch") or not isinstance(wire, dict):
        raise ValueError(f"not an event entry: {raw!r:.80}")
    return Entry(int(seq), scope, int(index), dict(wire), int(at), str(origin), holders)


# -- numbers both sides read (the close codes of orders: actors/orders.py) ---------------------
# The seat (and team) of a connection that watches, in a table's answers (`Joined`, `Views`).
WATCHING = -1


# -- requests: a gateway asks a table ---------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Unreadable:
    """A command this version cannot read (a kind of a newer gateway, a field missing): the
    table refuses it with `error` and applies nothing. Only ever made by the decoder."""

    kind: str
    args: Mapping[str, Any]
    error: ErrorBody


@dataclass(frozen=True, slots=True)
class Act:
    """A command of a player (a frame of `/ws`, or a REST lobby call), built at the edge as the
    engine's command, with the asker's seat left to the table (`engine.wire.ASKER`); `cmd_id`
    makes a retry harmless. On the data plane it travels as its kind and frame fields."""

    cmd_id: str
    origin: str  # the gateway asking: the events it causes come back in the reply
    player_id: str
    command: Command | Unreadable
    expires: int | None = None  # the table's time (ms) after which it is refused, unapplied

    @classmethod
    def of(
        cls,
        cmd_id: str,
        origin: str,
        player_id: str,
        kind: str,
        args: Mapping[str, Any],
        expires: int | None = None,
    ) -> Act:
        """From a frame's kind and fields (Refusal when engine.wire cannot read them)."""
        command = command_from_frame(kind, ASKER, args, player_id)
        return cls(cmd_id, origin, player_id, command, expires)

    @property
    def kind(self) -> str:
        return self.command.kind if isinstance(self.command, Unreadable) else kind_of(self.command)


@dataclass(frozen=True, slots=True)
class Join:
    """A player's connection (re)takes their seat (R25); with `watch`, a connection that only
    watches (seat -1: the public view and the events meant for everyone or for watchers)."""

    cmd_id: str
    origin: str
    conn: str
    player_id: str
    watch: bool = False


@dataclass(frozen=True, slots=True)
class Leave:
    """A connection ended; only the connection that holds the seat disconnects it."""

    origin: str
    conn: str


@dataclass(frozen=True, slots=True)
class Views:
    """Fresh snapshots for a gateway that lost track: one per (seat, player) still true; seat
    -1 asks for the public view its watchers start from (refused, left out, when the host closed
    the table to watchers). With `watching`, the gateway `origin` also says how many connections
    watch the table through it: spectators cost the table one call per gateway, not per
    spectator. Older tables ignore the two fields."""

    wanted: tuple[tuple[int, str], ...]
    origin: str = ""
    watching: int | None = None


Request = Act | Join | Leave | Views


# -- replies ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Outcome:
    """The answer to Act and Leave, and a refused Join: the events it caused travel here,
    not through the stream of the gateway that asked."""

    ok: bool
    error: ErrorBody | None = None
    seat: int | None = None
    events: tuple[Entry, ...] = ()
    replayed: bool = False  # a retry of a command already judged: its events went before


@dataclass(frozen=True, slots=True)
class Joined:
    """A connection holds its seat (-1, team -1: it watches): the snapshot it starts from, at
    `seq`."""

    seat: int
    team: int
    view: dict[str, Any]
    seq: int
    events: tuple[Entry, ...] = ()


@dataclass(frozen=True, slots=True)
class ViewSet:
    seq: int
    at: int
    joined: dict[int, Joined] = field(default_factory=dict)
    holders: dict[int, str] = field(default_factory=dict)


Reply = Outcome | Joined | ViewSet


# -- the data plane's own messages ------------------------------------------------------------
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
class Batch:
    """Events in seq order. The first batch after Follow says where the table stands (`head`)
    and whether the log still reached back to `after` (`resync` when it did not)."""

    events: tuple[Entry, ...]
    head: int | None = None
    resync: bool = False


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

# -- framing ----------------------------------------------------------------------------------
MAX_LINE = 8 * 1024 * 1024  # from a table: a welcome of 8 seats is ~10 KB, a replay ~1-2 MB
# From a gateway: a command or a Views of at most 8 seats is well under 1 KB. Small, so that a
# peer that has not said its hello yet can make a table buffer no more than this.
MAX_REQUEST_LINE = 64 * 1024

_TAGS: dict[type[Any], str] = {
    Act: "act",
    Join: "join",
    Leave: "leave",
    Views: "views",
    Outcome: "outcome",
    Joined: "joined",
    ViewSet: "viewset",
    Hello: "hello",
    Welcome: "welcome",
    Refused: "refused",
    Follow: "follow",
    Batch: "batch",
    Call: "call",
    Answer: "answer",
    Ping: "ping",
    Pong: "pong",
    Bye: "bye",
    Gone: "gone",
}
_CLASSES = {tag: cls for cls, tag in _TAGS.items()}


class BadMessage(ValueError):
    """A line that is not a message of this protocol."""


def to_json(msg: Any) -> Any:
    """Plain JSON values for a message (nested messages tagged with `t`)."""
    if isinstance(msg, Act):
        return _act_json(msg)
    if type(msg) in _TAGS:
        out: dict[str, Any] = {"t": _TAGS[type(msg)]}
        for f in fields(msg):
            out[f.name] = to_json(getattr(msg, f.name))
        return out
    if isinstance(msg, ErrorBody):
        return msg.to_wire()
    if isinstance(msg, Entry):
        return list(msg)
    if isinstance(msg, (list, tuple)):
        return [to_json(x) for x in msg]
    if isinstance(msg, Mapping):
        return {str(k): to_json(v) for k, v in msg.items()}
    return msg


def _act_json(act: Act) -> dict[str, Any]:
    """A command as its kind and frame fields: what every version of the data plane reads."""
    cmd = act.command
    args = dict(cmd.args) if isinstance(cmd, Unreadable) else frame_fields(cmd)
    out = {"t": "act", "cmd_id": act.cmd_id, "origin": act.origin, "player_id": act.player_id}
    return {**out, "kind": act.kind, "args": to_json(args), "expires": act.expires}


def _act(a: dict[str, Any]) -> Act:
    kind, args, player = str(a["kind"]), dict(a["args"]), str(a["player_id"])
    command: Command | Unreadable
    try:
        command = command_from_frame(kind, ASKER, args, player)
    except Refusal as refusal:
        command = Unreadable(kind, args, refusal.body)
    expires = None if a.get("expires") is None else int(a["expires"])
    return Act(str(a["cmd_id"]), str(a["origin"]), player, command, expires)


def encode(msg: Message) -> bytes:
    return json.dumps(to_json(msg), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> Message:
    try:
        raw = json.loads(line)
        msg = from_json(raw)
    except BadMessage:
        raise
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
        raise BadMessage(f"{type(exc).__name__}: {exc}"[:200]) from exc
    if not isinstance(msg, Message):
        raise BadMessage(f"not a message: {type(msg).__name__}")
    return msg


def from_json(raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise BadMessage("a message is a JSON object")
    cls = _CLASSES.get(str(raw.get("t")))
    if cls is None:
        raise BadMessage(f"unknown message {str(raw.get('t'))[:32]!r}")
    if cls is Act:  # its command travels as `kind` and `args`, which are not its fields
        return _act(raw)
    args = {f.name: raw[f.name] for f in fields(cls) if f.name in raw}
    return _BUILD.get(cls, lambda a: cls(**a))(args)


def _entries(raw: Any) -> tuple[Entry, ...]:
    return tuple(entry_from_json(e) for e in raw)


def _error(raw: Any) -> ErrorBody | None:
    return None if raw is None else ErrorBody.from_wire(raw)


def _joined(a: dict[str, Any]) -> Joined:
    return Joined(
        int(a["seat"]),
        int(a["team"]),
        dict(a["view"]),
        int(a["seq"]),
        _entries(a.get("events", [])),
    )


_BUILD: dict[type[Any], Any] = {
    Views: lambda a: Views(
        tuple((int(s), str(p)) for s, p in a["wanted"]),
        str(a.get("origin", "")),
        None if a.get("watching") is None else int(a["watching"]),
    ),
    Outcome: lambda a: Outcome(
        bool(a["ok"]),
        _error(a.get("error")),
        None if a.get("seat") is None else int(a["seat"]),
        _entries(a.get("events", [])),
        bool(a.get("replayed", False)),
    ),
    Joined: _joined,
    ViewSet: lambda a: ViewSet(
        int(a["seq"]),
        int(a["at"]),
        {int(s): _joined(j) for s, j in a.get("joined", {}).items()},
        {int(s): str(p) for s, p in a.get("holders", {}).items()},
    ),
    Batch: lambda a: Batch(
        _entries(a["events"]),
        None if a.get("head") is None else int(a["head"]),
        bool(a.get("resync", False)),
    ),
    Call: lambda a: Call(int(a["rid"]), _request(from_json(a["request"]))),
    Answer: lambda a: Answer(int(a["rid"]), _reply(from_json(a["reply"]))),
    Follow: lambda a: Follow(int(a["after"])),
    Ping: lambda a: Ping(int(a["n"])),
    Pong: lambda a: Pong(int(a["n"])),
}


def _request(msg: Any) -> Request:
    if not isinstance(msg, (Act, Join, Leave, Views)):
        raise BadMessage(f"not a request: {type(msg).__name__}")
    return msg


def _reply(msg: Any) -> Reply:
    if not isinstance(msg, (Outcome, Joined, ViewSet)):
        raise BadMessage(f"not a reply: {type(msg).__name__}")
    return msg
