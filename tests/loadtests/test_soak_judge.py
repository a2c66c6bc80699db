"""The soak's own arithmetic, on ledgers written by hand: a point is lost when a table goes back
on scores its players were shown within one match, or ends below them; a rematch is no loss; a
socket lost counts as a failure unless a gateway kill explains it."""

from __future__ import annotations

from typing import Any

from loadtests.faults import Fault
from loadtests.report import Sample
from loadtests.soak_judge import p99_outside, points_lost, recovery, requests


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


def test_recovery_gives_each_kind_its_nearest_rank_figures_and_counts_the_unrecovered() -> None:
    times = [3.0, 9.0, 4.0, 5.0, None]
    faults = [Fault("node_loss", recover_s=t) for t in times] + [Fault("actor_kill", recover_s=2)]
    got = recovery(faults)
    assert got["node_loss"] == {
        "n": 5,
        "p50_s": 4.0,  # the 2nd of 4: a time some loss really took, not a mean of two
        "p99_s": 9.0,
        "max_s": 9.0,
        "not_recovered": 1,
    }
    assert got["actor_kill"]["n"] == 1
    assert "dead_p50_s" not in got["actor_kill"]
    assert recovery([Fault("storm")])["storm"]["p50_s"] is None


def test_recovery_puts_a_node_loss_detection_apart() -> None:
    faults = [Fault("node_loss", recover_s=r, detail={"dead_s": d}) for r, d in [(5, 2), (9, 3)]]
    faults.append(Fault("node_loss", detail={"dead_s": None}))  # not recovered, not declared
    got = recovery(faults)["node_loss"]
    assert (got["dead_p50_s"], got["dead_p99_s"], got["not_recovered"]) == (2, 3, 1)


def test_recovery_puts_each_phase_of_a_lost_primary_apart() -> None:
    phases = [(2.7, 4.0, 4.2, 5.0, 9.0), (3.1, 4.4, 4.9, 5.1, 5.2), (3.0, 4.1, 5.3, 6.0, 32.5)]
    faults = [
        Fault(
            "redis_primary_kill",
            recover_s=max(p, w, g),
            detail={"failed_s": f, "promoted_s": p, "written_s": w, "serves_s": g, "moved_s": m},
        )
        for f, p, w, g, m in phases
    ]
    got = recovery(faults)["redis_primary_kill"]
    assert (got["promoted_p50_s"], got["promoted_p99_s"]) == (4.1, 4.4)
    assert (got["written_p50_s"], got["written_p99_s"]) == (4.9, 5.3)
    assert (got["failed_p50_s"], got["serves_p99_s"], got["max_s"]) == (3.0, 6.0, 6.0)
    assert got["moved_p99_s"] == 32.5  # the table's own pace, apart from the recovery
    assert "saved_p50_s" not in got  # none had it
