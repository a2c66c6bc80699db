"""Table actors of the previous release, and gateways of it, for one rolling upgrade.

Added 2026-12-02; REMOVE in the next release, with the lines that say "bridge (2026-12-02)" in
actors/ray_calls.py and actors/ray_names.py, and `PreviousReleaseMethods` as `TableActor`'s base
(docs/operations.md, "Across typed table calls": the tables this release opened need the names
of its methods on the next release's workers, so the next release keeps those names, or lets
such tables be restored from Redis instead of restarted in place).

The previous release (72e36a3) called a table actor's methods by name (`ping`, `endpoint`,
`serve`, `summary`, `seat_of`, `open`, `hand_over`, `renew`, `unsubscribe`) and read dict
answers. What Ray does across the two (tests/cluster/test_previous_release.py shows it on a
real Ray) decides the shape of this module:

- Ray ships an actor's class as a reference to each of its methods by name, looked up again in
  each process that loads it. A table of the previous release restarted on a worker of this
  release (a drain) fails to load ("Can't get attribute 'TableActor.endpoint'") unless
  `TableActor` still has every method name the previous one had: `PreviousReleaseMethods`
  gives it those, each asking `ask` and answering as the previous release did (which also
  serves a gateway of the previous release that meets an actor of this one). The other way
  round cannot be helped: an actor started by this release on a worker of the previous one
  fails to load ("Can't get attribute 'TableActor._endpoint'").
- No error tells a gateway that an actor lacks `ask`. A handle lists the methods of the class
  its actor was created with, as the calling process loads it: here that class inherits this
  release's `TableActor`, so `handle.ask` exists, and the call reaches a worker of the previous
  release, which has no such function: Ray's worker exits on an internal error, the caller gets
  `ActorUnavailableError`, and the table restarts. So a gateway knows before it calls: the
  previous release named its actors `table-` and 12 hex digits (this one 16), every handle that
  actors/ray_names.py gives out under such a name is noted here, and `send` calls those by the
  old names, one explicit call per kind of `TableCall`; `decoded` reads their answers as this
  release's types, a refusal as the one `ErrorBody`. Whatever code such an actor runs now (the
  previous release's, or this one's after a drain), those methods are there.

The previous release's pooled actors are used the same way: right after `helm upgrade` every
worker still runs the previous release, so until a worker of this release joins they are the
only actors a gateway of this release can open tables on.
"""

from __future__ import annotations

import dataclasses
import re
import weakref
from typing import Any, Protocol, TypeVar, cast

from ray.actor import ActorHandle

from actors import keys
from actors.codec import answer_from_json, answer_json
from actors.protocol import (
    Act,
    Address,
    Endpoint,
    HandedOver,
    HandOver,
    Open,
    Outcome,
    Overview,
    Probe,
    Renew,
    Reply,
    Request,
    Seated,
    SeatOf,
    Serve,
    Status,
    Summary,
    TableCall,
    Unreadable,
    Unsubscribe,
    answer_type,
)
from actors.snapshot import DEFAULT_REPLAY_TTL_S
from engine.commands import FillBots
from engine.errors import ErrorBody, ErrorCode

A = TypeVar("A")

# How the previous release named its table actors (its actors/directory.py: `uuid4().hex[:12]`).
PREVIOUS_NAME = re.compile(re.escape(keys.ACTOR_PREFIX) + "[0-9a-f]{12}")
# The handles given out for such names (weakly: a handle's mark goes with it).
_created_before: weakref.WeakSet[ActorHandle[Any]] = weakref.WeakSet()


# -- a gateway of this release, an actor created by the previous one -----------------------------
def note(name: str, handle: ActorHandle[Any]) -> None:
    """Mark `handle` if its actor's name was made by the previous release (actors/ray_names.py
    calls this for every handle it gives out)."""
    if PREVIOUS_NAME.fullmatch(name):
        _created_before.add(handle)


def created_before(handle: ActorHandle[Any]) -> bool:
    """Whether `handle`'s actor was created by the previous release (so `send` must be used)."""
    return handle in _created_before


def send(handle: ActorHandle[Any], call: TableCall[Any]) -> Any:
    """`call` to an actor created by the previous release, as the method that release had for
    it: Ray's reference to the previous release's answer, which `decoded` reads."""
    match call:
        case Probe():
            return handle.ping.remote()
        case Endpoint():
            return handle.endpoint.remote()
        case Summary():
            return handle.summary.remote()
        case SeatOf(player_id=player_id):
            return handle.seat_of.remote(player_id)
        case Serve(request=request):
            return handle.serve.remote(_readable(request))
        case Open():
            return handle.open.remote(
                call.code, call.config, call.host, call.name, call.idle, call.replay_ttl
            )
        case HandOver():
            return handle.hand_over.remote()
        case Renew(gateway=gateway):
            return handle.renew.remote(gateway)
        case Unsubscribe(gateway=gateway):
            return handle.unsubscribe.remote(gateway)
    raise TypeError(f"the previous release has no call for {type(call).__name__}")


def _readable(request: Request) -> Request:
    """`request` as the previous release can unpickle it. Its engine has no `FillBots` (new in
    this release): sent as a kind it does not know, refused as its data plane refuses it (even
    once a drain brought this release's code: nothing here can tell)."""
    if isinstance(request, Act) and isinstance(request.command, FillBots):
        why = "not known to tables opened before the upgrade: add the bots one by one"
        refusal = ErrorBody(ErrorCode.UNKNOWN_TYPE.value, why)
        return dataclasses.replace(request, command=Unreadable(request.kind, {}, refusal))
    return request


def decoded(call: TableCall[A], raw: object) -> A:
    """The previous release's answer to `call` as this release's type; TypeError for anything
    else. (Its `Reply`, bool and None answers are this release's already.)"""
    answer: object
    try:
        match call, raw:
            case Probe(), dict():
                answer = Status(
                    int(raw["pid"]),
                    str(raw["node"]),
                    str(raw["code"]),
                    int(raw["seq"]),
                    str(raw["incarnation"]),
                    int(raw["links_refused"]),
                    int(raw["nice"]),
                )
            case Endpoint() | Summary() | SeatOf(), dict():
                answer = answer_from_json(call, raw)  # the shapes the cells' hop kept
            case Open(), dict():
                error = raw.get("error")
                body = None if error is None else ErrorBody.from_wire(error)
                answer = Outcome(bool(raw["ok"]), body)
            case HandOver(), dict():
                answer = HandedOver(str(raw["code"]), bool(raw["saved"]))
            case _:
                answer = raw
    except (AttributeError, KeyError, TypeError, ValueError) as exc:  # BadMessage: a ValueError
        raise TypeError(f"{type(call).__name__} answered with {raw!r:.80}") from exc
    if not isinstance(answer, answer_type(call)):
        raise TypeError(f"{type(call).__name__} answered with a {type(raw).__name__}")
    return cast(A, answer)


# -- an actor of this release, a handle (or a gateway) of the previous one ------------------------
class _Asks(Protocol):
    async def ask(self, call: TableCall[Any]) -> object: ...


async def _asked(actor: _Asks, call: TableCall[A]) -> A:
    answer = await actor.ask(call)
    if not isinstance(answer, answer_type(call)):  # pragma: no cover - `ask` answers its type
        raise TypeError(f"{type(call).__name__} answered with a {type(answer).__name__}")
    return cast(A, answer)


class PreviousReleaseMethods:
    """The previous release's Ray methods of a table actor, with its arguments and answers,
    each one through `ask`. `watching` and `link_ended` were never called over Ray: they are
    here only because the previous release's class names them."""

    async def ping(self: _Asks) -> dict[str, Any]:
        return dataclasses.asdict(await _asked(self, Probe()))

    async def endpoint(self: _Asks) -> dict[str, Any] | None:
        where: Address | None = await _asked(self, Endpoint())
        return cast(dict[str, Any] | None, answer_json(where))

    async def summary(self: _Asks) -> dict[str, Any] | None:
        overview: Overview | None = await _asked(self, Summary())
        return None if overview is None else overview.wire

    async def seat_of(self: _Asks, player_id: str) -> dict[str, Any] | None:
        seated: Seated | None = await _asked(self, SeatOf(player_id))
        return cast(dict[str, Any] | None, answer_json(seated))

    async def serve(self: _Asks, request: Request) -> Reply:
        return await _asked(self, Serve(request))

    async def open(
        self: _Asks,
        code: str,
        config: dict[str, Any],
        host: str,
        name: str,
        idle: tuple[float, ...],
        replay_ttl: int = DEFAULT_REPLAY_TTL_S,
    ) -> dict[str, Any]:
        opened = await _asked(self, Open(code, config, host, name, tuple(idle), replay_ttl))
        if opened.ok:
            return {"ok": True}
        refusal = opened.error or ErrorBody(ErrorCode.NOT_ALLOWED.value, "not opened")
        return {"ok": False, "error": refusal.to_wire()}

    async def hand_over(self: _Asks) -> dict[str, Any]:
        return dataclasses.asdict(await _asked(self, HandOver()))

    async def renew(self: _Asks, gateway: str) -> bool:
        return await _asked(self, Renew(gateway))

    async def unsubscribe(self: _Asks, gateway: str) -> None:
        await self.ask(Unsubscribe(gateway))

    async def watching(self: _Asks) -> int:
        overview: Overview | None = await _asked(self, Summary())
        return 0 if overview is None else int(overview.wire.get("watching", 0))

    def link_ended(self, gateway: str, orderly: bool) -> None:
        raise TypeError("link_ended is the data plane's, never a Ray call")
