"""How the messages of actors/protocol.py travel as JSON: the data plane's, one line each,
nested messages tagged with `t`, and the table calls a gateway asks of another cell's
(`call_json`, `answer_json`). What is not one of them is refused with `BadMessage`, never
half-read. A command travels as its kind and frame fields (engine.wire), as it always has, so
gateways and tables of two versions still read each other in a rolling upgrade."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar, cast

from actors.link_messages import (
    Answer,
    Bye,
    Call,
    Follow,
    Gone,
    Hello,
    Message,
    Ping,
    Pong,
    Refused,
    Welcome,
)
from actors.protocol import (
    Act,
    Address,
    Batch,
    Endpoint,
    Entry,
    ErrorBody,
    Join,
    Joined,
    Leave,
    Outcome,
    Overview,
    Reply,
    Request,
    Seated,
    SeatOf,
    Serve,
    Summary,
    TableCall,
    Unreadable,
    Views,
    ViewSet,
    answer_type,
    entry_from_json,
)
from engine.commands import Command
from engine.errors import Refusal
from engine.wire import ASKER, command_from_frame, frame_fields

A = TypeVar("A")

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


# -- table calls between cells (gateway/cells.py) ----------------------------------------------
# A call crosses as {"method": its tag, "args": [...]} and its answer in the shapes gateways have
# always sent (a `Serve`'s reply as a message, the others as plain objects), so that gateways of
# cells of two releases still understand each other (docs/scaling.md, "Upgrades").
def call_json(call: TableCall[Any]) -> dict[str, Any]:
    """BadMessage for a call that is never asked of another cell (only these four are)."""
    match call:
        case Serve(request=request):
            return {"method": "serve", "args": [to_json(request)]}
        case SeatOf(player_id=player_id):
            return {"method": "seat_of", "args": [player_id]}
        case Endpoint():
            return {"method": "endpoint", "args": []}
        case Summary():
            return {"method": "summary", "args": []}
    raise BadMessage(f"{type(call).__name__} is not asked of another cell")


def call_from_json(method: str, args: list[Any]) -> TableCall[Any]:
    """`call_json` read back, its arguments typed; BadMessage for anything else."""
    if method == "serve" and len(args) == 1:
        try:
            return Serve(_request(from_json(args[0])))
        except (KeyError, TypeError, ValueError, RecursionError) as exc:
            raise BadMessage(f"not a request: {type(exc).__name__}") from exc
    if method == "seat_of" and len(args) == 1 and isinstance(args[0], str):
        return SeatOf(args[0])
    if method == "endpoint" and not args:
        return Endpoint()
    if method == "summary" and not args:
        return Summary()
    raise BadMessage(f"not a call of {method[:32]!r}")


def answer_json(answer: object) -> Any:
    if isinstance(answer, (Address, Seated)):
        return {f.name: getattr(answer, f.name) for f in fields(answer)}
    if isinstance(answer, Overview):
        return to_json(answer.wire)
    return to_json(answer)


def answer_from_json(call: TableCall[A], raw: Any) -> A:
    """`answer_json` read back as what `call` is answered with; BadMessage for anything else."""
    answer: object
    try:
        if raw is None:
            answer = None
        elif isinstance(call, Endpoint):
            answer = Address(str(raw["host"]), int(raw["port"]), str(raw["incarnation"]))
        elif isinstance(call, SeatOf):
            answer = Seated(int(raw["seat"]), int(raw["players"]), str(raw["phase"]))
        elif isinstance(call, Summary):
            answer = Overview.of(raw)
        else:
            answer = from_json(raw)
    except (KeyError, TypeError, ValueError) as exc:  # BadMessage is a ValueError too
        raise BadMessage(f"not an answer to {type(call).__name__}: {exc}"[:200]) from exc
    if not isinstance(answer, answer_type(call)):
        raise BadMessage(f"{type(call).__name__} answered with a {type(answer).__name__}")
    return cast(A, answer)
