"""What gateways and table actors say to each other, typed (how it travels: actors/codec.py).

The same messages cross both planes. On the data plane (a TCP connection per gateway and table,
`actors/link_server.py` ↔ `gateway/table_link.py`) each message is one line of JSON: measured
against msgpack (docs/performance.md), JSON costs about the same for these small
messages and needs no other library, and a line can be read in a packet capture (the
connection's own messages, its hello, keep-alives, and calls and answers by id, are
actors/link_messages.py's). On the control plane the same dataclasses travel pickled, each in a
`TableCall`: every Ray call to a table actor is one of those, with the type of its answer
(`actors/ray_calls.py` sends them). A pickle names each class by its module: those here stay
here, where an actor or a gateway of another release looks for them during an upgrade.

A gateway never names the seat a command acts for: the actor finds it from the player, so a
gateway cannot act for a seat its player does not hold (R30).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, NamedTuple, TypeVar, get_args, get_origin

from engine.commands import Command
from engine.errors import ErrorBody as ErrorBody  # the one refusal type, the engine's
from engine.events import Scope
from engine.wire import ASKER, command_from_frame, kind_of


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


# -- events in order: a data-plane `Follow`'s answer, and a Ray `Subscribe`'s stream ----------
@dataclass(frozen=True, slots=True)
class Batch:
    """Events in seq order. The first batch after Follow says where the table stands (`head`)
    and whether the log still reached back to `after` (`resync` when it did not)."""

    events: tuple[Entry, ...]
    head: int | None = None
    resync: bool = False


# -- calls: what a gateway asks a table actor over Ray (the control plane) ---------------------
A = TypeVar("A", covariant=True)


class TableCall(Generic[A]):
    """A call to a table actor, answered with an `A`: sent by `actors.ray_calls.ask` only, and
    in the codec's JSON to a gateway of another cell (gateway/cells.py)."""

    __slots__ = ()


class TableNotHere(Exception):
    """Raised by a table actor for a call addressed to a table it does not hold (any more): its
    table stopped and the actor went back to the pool, or serves another table now
    (`TableActor`: actors are used for table after table). The caller asks the table's record
    again, as it would after the actor's death."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def addressed(call: TableCall[A], code: str) -> TableCall[A]:
    """`call` addressed to the table of `code`, when it is one of the calls about a table
    (`table`: a field of theirs); a call about the actor itself (`Probe`, `Open`, `Adopt`,
    `HandOver`) is sent as it is."""
    if "table" not in getattr(type(call), "__dataclass_fields__", {}):
        return call
    return replace(call, table=code)  # type: ignore[type-var]


def answer_type(call: TableCall[Any]) -> Any:
    """The type `call` is answered with (for `isinstance`: a class or a union of classes)."""
    for base in getattr(type(call), "__orig_bases__", ()):
        if get_origin(base) is TableCall:
            return get_args(base)[0]
    raise TypeError(f"not a table call: {type(call).__name__}")


@dataclass(frozen=True, slots=True)
class Status:
    """A table actor's answer to `Probe`: its process and node, and its table's progress."""

    pid: int
    node: str  # Ray's node id
    code: str  # "" for a pooled actor
    seq: int
    incarnation: str
    links_refused: int  # data-plane connections whose hello failed
    nice: int  # its CPU priority (actors/priority.py)


@dataclass(frozen=True, slots=True)
class Address:
    """Where a table's data plane listens, and which process (a restarted one is another)."""

    host: str
    port: int
    incarnation: str


@dataclass(frozen=True, slots=True)
class Overview:
    """A table's public summary as REST answers it (`wire`), with what a gateway reads of it."""

    players: int
    phase: str
    wire: dict[str, Any]

    @classmethod
    def of(cls, wire: Mapping[str, Any]) -> Overview:
        return cls(int(wire["players"]), str(wire["phase"]), dict(wire))


@dataclass(frozen=True, slots=True)
class Seated:
    """Where a player sits at a table, and how far its match is."""

    seat: int
    players: int
    phase: str


@dataclass(frozen=True, slots=True)
class HandedOver:
    """`saved` False: the latest changes are not in Redis (saves failing), a move loses them.
    `superseded`: the table's record names another actor (this incarnation was cut off while
    the table moved): a restart would serve nothing, so it is stopped for good instead. Read
    it with `getattr(..., "superseded", False)`: an actor of the release before (2026-12-03)
    answers without it."""

    code: str
    saved: bool
    superseded: bool = False


@dataclass(frozen=True, slots=True)
class Probe(TableCall[Status]):
    """Are you there, and where (readiness, a new actor placed, a drain)? A lost table's actor
    ends instead of answering."""


@dataclass(frozen=True, slots=True)
class Endpoint(TableCall[Address | None]):
    """Where the table's data plane listens (None: no table here). Listening starts with the
    first ask, so pooled actors hold no port."""

    table: str = ""  # the code it is about (`addressed`): "" from an older gateway


@dataclass(frozen=True, slots=True)
class Summary(TableCall[Overview | None]):
    """The table's summary (None: no table here)."""

    table: str = ""  # the code it is about (`addressed`): "" from an older gateway


@dataclass(frozen=True, slots=True)
class SeatOf(TableCall[Seated | None]):
    """Where `player_id` sits (None: no seat of theirs, or no table)."""

    player_id: str
    table: str = ""  # the code it is about (`addressed`): "" from an older gateway


@dataclass(frozen=True, slots=True)
class Serve(TableCall[Reply]):
    """A request of the data plane, over Ray: a REST lobby call from a player with no socket
    on this gateway, and play itself with `QUATRO_DATA_PLANE=ray`."""

    request: Request
    table: str = ""  # the code it is about (`addressed`): "" from an older gateway


@dataclass(frozen=True, slots=True)
class Open(TableCall[Outcome]):
    """Give a pooled actor its table, its creator in seat 0 (`TableCore.open`). Refused
    `not_allowed` by an actor that already has one."""

    code: str
    config: dict[str, Any]
    host: str
    name: str
    idle: tuple[float, ...]  # how long it lives once over, in its lobby, …: actors/idle.py
    replay_ttl: int
    # Its replay's name and its matches' ids ("" from an older gateway: the actor's name).
    table_id: str = ""
    # The level its bots start at (issue 46: relaxed for a newcomer's table); "" from an older
    # gateway: the engine's default. Apart from `config`, whose every key an actor's
    # TableConfig must know: an actor of the release before, given a table by a gateway of
    # this one while the workers roll, unpickles this field away and opens it at normal,
    # where an unknown key of `config` would fail the creation.
    bot_level: str = ""


@dataclass(frozen=True, slots=True)
class Adopt(TableCall[Outcome]):
    """A pooled actor takes over the table of `code`, moved here off a lost node
    (actors/rescue.py): it restores the table from its snapshot, as a restart would."""

    code: str


@dataclass(frozen=True, slots=True)
class HandOver(TableCall[HandedOver]):
    """Before the actor is stopped to restart on another node: everything applied to Redis."""


@dataclass(frozen=True, slots=True)
class Renew(TableCall[bool]):
    """Keep `gateway`'s Ray subscription (`Subscribe`) alive; False when it has none."""

    gateway: str
    table: str = ""  # the code it is about (`addressed`): "" from an older gateway


@dataclass(frozen=True, slots=True)
class Unsubscribe(TableCall[None]):
    gateway: str
    table: str = ""  # the code it is about (`addressed`): "" from an older gateway


@dataclass(frozen=True, slots=True)
class Subscribe:
    """Follow the table over Ray: a streaming call of `Batch`es, not a `TableCall`
    (`actors.ray_calls.follow`), leased: renewed with `Renew` or it ends."""

    gateway: str
    after: int
    table: str = ""  # the code it is about: "" from an older gateway
