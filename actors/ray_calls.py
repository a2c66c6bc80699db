"""A table actor called over Ray: `send`, the one function every call goes through (a
`TableCall` of actors/protocol.py), `answered`, which checks its answer's type, and `ask`, the
two together; `follow` for the one stream; Ray's errors told apart by their type.

Ray never retries a table actor's call (`max_task_retries=0`): whoever asks decides, with the
command's id making a retry harmless (actors/table_calls.py waits through restarts).
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar, cast

from ray.exceptions import (
    ActorDiedError,
    ActorUnavailableError,
    ActorUnschedulableError,
    RayActorError,
)

from actors import previous_release
from actors.protocol import Subscribe, TableCall, answer_type
from actors.ray_names import Handle

A = TypeVar("A")

# The actor did not answer: its process or node died, or it is restarting (both subclasses of
# RayActorError, named for the reader), or Ray can place it nowhere (ActorUnschedulableError, not
# a RayActorError: an actor pinned to a node that died; Ray declares a lost node dead within
# seconds, before a caller's own timeout, so a call meets it).
ActorGone = (RayActorError, ActorUnavailableError, ActorDiedError, ActorUnschedulableError)


def dead_for_good(exc: BaseException) -> bool:
    """Whether Ray says the actor is stopped for good: `ActorDiedError` (killed without a
    restart, or out of restarts, which table actors never are), `ActorUnschedulableError` (no
    node may take it again). `ActorUnavailableError` is an actor on its way back: its node lost,
    its process restarting. A call that meets a stop with a restart (a drain's) gets
    `ActorDiedError` too, so callers check the table's record before they give it up."""
    return isinstance(exc, ActorDiedError | ActorUnschedulableError)


def send(handle: Handle, call: TableCall[A]) -> Any:
    """Send `call` to the table actor behind `handle`: Ray's reference to its answer, read
    with `answered` (`ask` does both; a blocking caller, a test or a script, `ray.get`s it).
    An actor created by the previous release answers as that release did: only `ask` reads
    it."""
    if previous_release.created_before(handle):  # the bridge (2026-12-02): goes next release
        return previous_release.send(handle, call)
    return handle.ask.remote(call)


def answered(call: TableCall[A], answer: object) -> A:
    """`answer`, as what `call` is answered with; TypeError for anything else (an actor of
    another release)."""
    if not isinstance(answer, answer_type(call)):
        raise TypeError(f"{type(call).__name__} answered with a {type(answer).__name__}")
    return cast(A, answer)


async def ask(handle: Handle, call: TableCall[A]) -> A:
    """`call` answered by the table actor behind `handle`. Raises Ray's errors (`ActorGone`),
    and TypeError for an answer not of the call's type."""
    answer = await send(handle, call)
    if previous_release.created_before(handle):  # the bridge (2026-12-02): goes next release
        return previous_release.decoded(call, answer)
    return answered(call, answer)


def follow(handle: Handle, sub: Subscribe) -> Any:
    """The table's batches over Ray: a streaming call, iterated for refs to `Batch`es, stopped
    with `ray.cancel`."""
    return handle.subscribe.remote(sub)


class LastAnswer:
    """When a table actor last answered this gateway (a Ray call, or a line of the data
    plane): an answer this recent proves it can reach tables (`/readyz`)."""

    def __init__(self) -> None:
        self._at = float("-inf")  # loop time

    def heard(self) -> None:
        self._at = asyncio.get_running_loop().time()

    def within(self, seconds: float) -> bool:
        return asyncio.get_running_loop().time() - self._at < seconds
