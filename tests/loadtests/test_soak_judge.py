"""The soak's own arithmetic, on ledgers written by hand: a point is lost when a table goes back
on scores its players were shown within one match, or ends below them; a rematch is no loss; a
socket lost counts as a failure unless a gateway kill explains it."""

from __future__ import annotations

from typing import Any

from loadtests.faults import Fault
from loadtests.report import Sample
from loadtests.soak_judge import p99_outside, points_lost, requests


def shown(
    code: str, at: int, kind: str, scores: list[int] | None = None, **kw: Any
) -> dict[str, Any]:
    return {"t": at / 1000, "code": code, "seat": 0, "kind": kind, "at": at, "scores": scores, **kw}


def summary(scores: list[int], phase: str = "playing", rnd: int = 3) -> dict[str, Any]:
    return {"scores": scores, "phase": phase, "round": rnd}


def test_scores_that_only_grow_lose_nothing() -> None:
    ledger = [
        shown("A", 1, "signing", round=1),
        shown("A", 2, "reveal", [1, 0]),
        shown("A", 3, "welcome", [1, 0], phase="pause", round=1),
        shown("A", 4, "reveal", [1, 1]),
    ]
    pts = points_lost(ledger, {"A": summary([1, 1])})
    assert (pts.lost, pts.reveals, pts.gone) == (0, 2, [])


def test_a_table_that_goes_back_on_a_score_loses_it() -> None:
    ledger = [
        shown("A", 2, "reveal", [2, 1]),
        shown("A", 5, "welcome", [1, 1], phase="playing", round=3),  # restored from too old
    ]
    pts = points_lost(ledger, {"A": summary([1, 1])})
    assert pts.lost == 1
    assert pts.regressions[0]["had"] == [2, 1]


def test_final_scores_below_the_last_shown_are_lost() -> None:
    pts = points_lost([shown("A", 2, "reveal", [2, 3])], {"A": summary([2, 1])})
    assert pts.lost == 2


def test_a_rematch_starts_from_zero_without_a_loss() -> None:
    ledger = [
        shown("A", 2, "over", [5, 3]),
        shown("A", 3, "signing", round=1),
        shown("A", 4, "reveal", [0, 1]),
    ]
    assert points_lost(ledger, {"A": summary([0, 1])}).lost == 0


def test_a_table_gone_before_its_match_ended_is_reported() -> None:
    pts = points_lost([shown("A", 2, "reveal", [1, 0])], {"A": None})
    assert pts.gone == ["A"]


def test_a_lost_socket_is_a_failure_unless_its_gateway_was_killed() -> None:
    kill = Fault("gateway_kill", start=100.0, end=110.0, target="gateway :8001")
    samples = [
        Sample(105.0, "LOST", "ws:lost@8001", 0.0, False),  # explained
        Sample(105.0, "LOST", "ws:lost@8002", 0.0, False),  # the other gateway: not
        Sample(130.0, "LOST", "ws:lost@8001", 0.0, False),  # after the window: not
        Sample(105.0, "REFUSED", "swap:stale", 3.0, False),
    ]
    req = requests(samples, [kill])
    assert req["failures"] == 2
    assert req["lost_sockets_explained"] == 1
    assert req["refusals"] == {"swap:stale": 1}


def test_p99_leaves_out_exchanges_that_overlap_a_fault() -> None:
    fault = Fault("actor_stop", start=100.0, end=120.0)
    samples = [Sample(float(t), "WS", "swap→ack", 5.0, False) for t in range(10, 90)]
    samples.append(Sample(121.0, "WS", "swap→ack", 20000.0, False))  # sent during the stop
    assert p99_outside(samples, [fault]) == 5.0
