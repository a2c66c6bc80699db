"""A CI-sized run of the WebSocket fuzzer (loadtests/fuzz_ws.py): 2,000 hypothesis-drawn
frames, valid, invalid and hostile, over four tables in lobby, signing, playing and pause. No
table actor crashes, no close 1011, no traceback in the gateway's log, every table still plays."""

from __future__ import annotations

import json

from loadtests.fuzz_ws import fuzz, holder_pid
from tests.conftest import Stack


async def test_2000_fuzzed_frames_break_nothing(stack: Stack) -> None:
    ray = stack.driver()

    def pid_of(code: str) -> int:
        return holder_pid(ray, stack.namespace, code)

    summary = await fuzz(stack.a.url, 2_000, seed=7, tables=4, log=stack.a.log, pid_of=pid_of)
    report = json.dumps(summary, indent=2, ensure_ascii=False)
    print(report)
    assert summary["frames_sent"] >= 2_000, report
    assert summary["close_1011"] == 0, report
    assert summary["unexpected_closes"] == 0, report
    assert summary["actor_crashes"] == 0, report
    assert summary["tracebacks"] == 0, report
    assert all(summary["playable"].values()), report
    assert summary["unanswered"] == 0, report
