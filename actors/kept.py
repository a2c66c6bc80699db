"""What a table actor keeps between tables: the audit of reuse (actors/reuse.py), asked by
tests/cluster/test_reuse_audit.py through the `Inspect` call, and answered only where the test
hooks are on (`QUATRO_TEST_HOOKS=1` in the actor's environment; never in production: the answer
says what strings the actor holds).

From the actor object, everything its attributes reach is walked (containers, instances,
closures, coroutines and their frames), but not modules, classes, functions' globals or the
event loop: those are the process's, shared by every table it will ever serve, and from them
the whole interpreter is reachable. The loop's tasks are listed apart, by name.
"""

from __future__ import annotations

import asyncio
import gc
import os
import types
from collections import deque
from dataclasses import dataclass

from actors.protocol import TableCall

HOOKS_ENV = "QUATRO_TEST_HOOKS"
MOST_OBJECTS = 2_000_000  # a walk past this is reported as cut short, not hung on
# Not followed: code and the process's shared machinery (see the module's docstring).
_OPAQUE = (
    types.ModuleType,
    type,
    types.CodeType,
    types.BuiltinFunctionType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    asyncio.AbstractEventLoop,
)


@dataclass(frozen=True, slots=True)
class Kept:
    """`found`: the needles some string or bytes reachable from the actor holds; `engine`: the
    objects of `engine/` reachable (a table, a hand, a bot: none while the actor has no table);
    `tasks`: the names of the process's asyncio tasks, the asking one left out; `walked`: the
    objects looked at; `cut`: the walk stopped at `MOST_OBJECTS`."""

    found: tuple[str, ...]
    engine: int
    tasks: tuple[str, ...]
    walked: int
    cut: bool


@dataclass(frozen=True, slots=True)
class Inspect(TableCall[Kept]):
    """Test hooks only: what of `needles` this actor still reaches (`Kept`)."""

    needles: tuple[str, ...] = ()


def hooks_on() -> bool:
    return os.environ.get(HOOKS_ENV) == "1"


def inspect(root: object, needles: tuple[str, ...]) -> Kept:
    """`Kept` from `root` (the actor). PermissionError without the test hooks."""
    if not hooks_on():
        raise PermissionError(f"Inspect needs {HOOKS_ENV}=1 on the actor's node")
    wanted = tuple(n for n in needles if n)
    found: set[str] = set()
    engine = 0
    seen: set[int] = {id(root)}
    queue: deque[object] = deque([root])
    walked = 0
    while queue and walked < MOST_OBJECTS:
        obj = queue.popleft()
        walked += 1
        if isinstance(obj, str | bytes):
            text = obj if isinstance(obj, str) else obj.decode("utf-8", "replace")
            found.update(n for n in wanted if n in text)
            continue
        if type(obj).__module__.startswith("engine."):
            engine += 1
        for ref in _referents(obj):
            if id(ref) not in seen and not isinstance(ref, _OPAQUE):
                seen.add(id(ref))
                queue.append(ref)
    current = asyncio.current_task()
    tasks = tuple(sorted(t.get_name() for t in asyncio.all_tasks() if t is not current))
    return Kept(tuple(sorted(found)), engine, tasks, walked, bool(queue))


def _referents(obj: object) -> list[object]:
    if isinstance(obj, types.FunctionType):
        # Its closure and defaults are data; its globals are its module's.
        cells = [c.cell_contents for c in obj.__closure__ or () if _filled(c)]
        return [*cells, *(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()]
    return list(gc.get_referents(obj))


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True
