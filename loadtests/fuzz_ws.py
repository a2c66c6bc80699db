"""Fuzz the WebSocket of a live stack with hypothesis-drawn frames (loadtests/fuzz_frames.py)
over several tables in lobby, signing, playing and pause, then check that nothing broke:

    .venv/bin/python -m loadtests.fuzz_ws --frames 100000              # starts its own stack
    .venv/bin/python -m loadtests.fuzz_ws --url http://127.0.0.1:8000 --frames 100000 \\
        --log gateway.log --ray-address 127.0.0.1:6379 --namespace quatro \\
        --ray-token-path …   # the "Ray token file:" that `make run` prints

The server must run with QUATRO_TEST_HOOKS=1 (the tables use idle bots and a faster clock).
Each table's human seats are fuzzing lanes: a lane sends a frame, waits for its one answer (or
the close it earns), keeps under the flood guard's rate except when it floods on purpose, and
reconnects after a close. It prints a JSON summary, one line: frames sent, answers by type and
code, closes by code, table actor crashes (actor pids before and after, when Ray is reachable),
tracebacks in the gateway's log, and whether every table still plays; it exits 1 if any check
fails.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from cluster.stack import Launched
from cluster.stack import Spec as StackSpec
from loadtests import cli
from loadtests.figures import emit
from loadtests.fuzz_frames import generate
from loadtests.fuzz_lanes import Fuzzer, Tally

EXPECTED_CLOSES = {1000, 1008, 1009, 1013, 4409}  # flood, too big, full, replaced
PHASES = ["lobby", "signing", "playing", "pause"]


def _size(log: Path | None) -> int:
    return log.stat().st_size if log is not None and log.exists() else 0


def tracebacks(log: Path | None, offset: int) -> int | None:
    if log is None or not log.exists():
        return None
    with log.open("rb") as f:
        f.seek(offset)
        return f.read().count(b"Traceback")


async def fuzz(
    base: str,
    frames: int,
    *,
    seed: int = 1,
    tables: int = 8,
    log: Path | None = None,
    pid_of: Callable[[str], int] | None = None,
) -> dict[str, Any]:
    """Send `frames` fuzz frames to the stack at `base`; the summary (see the module doc)."""
    t0 = time.monotonic()
    specs = generate(frames, seed)
    drawn_s = time.monotonic() - t0
    offset = _size(log)
    tally = Tally()
    fuzzer = Fuzzer(base, tally)
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        lanes_by_table = [await fuzzer.table(c, PHASES[i % len(PHASES)], i) for i in range(tables)]
        codes = [ls[0].code for ls in lanes_by_table]
        pids_before = [await asyncio.to_thread(pid_of, c) for c in codes] if pid_of else None
        lanes = [lane for ls in lanes_by_table for lane in ls]
        shares = [specs[i :: len(lanes)] for i in range(len(lanes))]
        started = time.monotonic()
        async with asyncio.TaskGroup() as tg:
            for lane, share in zip(lanes, shares, strict=True):
                tg.create_task(fuzzer.run_lane(lane, share))
        fuzz_s = time.monotonic() - started
        playable = {
            code: await fuzzer.playable(c, ls)
            for code, ls in zip(codes, lanes_by_table, strict=True)
        }
        pids_after = [await asyncio.to_thread(pid_of, c) for c in codes] if pid_of else None
        for lane in lanes:
            await fuzzer.drop(lane)
    crashes = (
        sum(a != b for a, b in zip(pids_before, pids_after, strict=True))
        if pids_before is not None and pids_after is not None
        else None
    )
    closes = {str(k): v for k, v in sorted(tally.closes.items())}
    summary: dict[str, Any] = {
        "frames_sent": tally.frames,
        "specs": len(specs),
        "tables": tables,
        "lanes": len(lanes),
        "seed": seed,
        "categories": dict(tally.categories.most_common()),
        "answers": dict(tally.answers.most_common()),
        "closes": closes,
        "close_1011": tally.closes.get(1011, 0),
        "unexpected_closes": sum(v for k, v in tally.closes.items() if k not in EXPECTED_CLOSES),
        "unanswered": tally.unanswered,
        "reconnects": tally.reconnects,
        "actor_crashes": crashes,
        "tracebacks": tracebacks(log, offset),
        "playable": playable,
        "problems": tally.problems[:20],
        "problem_count": len(tally.problems),
        "seconds": {"draw": round(drawn_s, 1), "fuzz": round(fuzz_s, 1)},
        "frames_per_s": round(tally.frames / fuzz_s, 1) if fuzz_s else None,
    }
    summary["ok"] = (
        summary["close_1011"] == 0
        and not summary["actor_crashes"]
        and not summary["tracebacks"]
        and all(playable.values())
    )
    return summary


def ray_pids(address: str, namespace: str, token_path: str | None) -> Callable[[str], int]:
    """A table's code -> the pid of the table actor holding it (each table actor asked `Probe`:
    an actor serves table after table, so no name tells which). Joins Ray as the gateway does
    (loopback kept, the cluster's token)."""
    import ray

    from cluster.connect import connect_ray
    from cluster.settings import Settings

    connect_ray(
        Settings(
            ray_address=address,
            ray_namespace=namespace,
            ray_auth_mode="token" if token_path else None,
            ray_auth_token_path=token_path,
        )
    )

    def pid_of(code: str) -> int:
        return holder_pid(ray, namespace, code)

    return pid_of


def holder_pid(ray: Any, namespace: str, code: str) -> int:
    """The pid of the table actor of `namespace` that holds the table `code` (its `Probe`)."""
    from actors import keys
    from actors.protocol import Probe
    from actors.ray_calls import answered, send

    named = ray.util.list_named_actors(all_namespaces=True)
    names = [
        a["name"]
        for a in named
        if a["namespace"] == namespace and a["name"].startswith(keys.ACTOR_PREFIX)
    ]
    for name in names:
        try:
            handle = ray.get_actor(name, namespace=namespace)
            status = answered(Probe(), ray.get(send(handle, Probe()), timeout=60))
        except Exception:  # gone meanwhile: not the one
            continue
        if status.code == code:
            return status.pid
    raise LookupError(f"no table actor holds {code}")


def main(argv: list[str] | None = None) -> int:
    parser = cli.command("fuzz_ws", __doc__)
    cli.add_url(parser, what="a running stack with QUATRO_TEST_HOOKS=1; none: start one")
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log", type=Path, help="the gateway's log, to count tracebacks")
    parser.add_argument("--ray-address", help="to compare table actor pids (crashes)")
    parser.add_argument("--namespace", default="quatro")
    parser.add_argument("--ray-token-path", help="the file holding that cluster's Ray token")
    args = parser.parse_args(argv)
    own = None
    url, log, ray_address, token = args.url, args.log, args.ray_address, args.ray_token_path
    if url is None:
        log = Path(tempfile.gettempdir()) / f"quatro-fuzz-{os.getpid()}.log"
        own = Launched(StackSpec.under_load(test_hooks=True, table_slots=64, pool=2), log).start()
        url, ray_address, token = own.url, own.ray_address, own.ray_token_path
    try:
        pid_of = ray_pids(ray_address, args.namespace, token) if ray_address else None
        summary = asyncio.run(
            fuzz(url, args.frames, seed=args.seed, tables=args.tables, log=log, pid_of=pid_of)
        )
    finally:
        if own is not None:
            own.stop()
    emit(summary)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
