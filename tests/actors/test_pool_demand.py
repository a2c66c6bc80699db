"""The pool's demand policy (actors/pool_demand.py) as the functions of time it is: every answer
for a time given, no clock waited for. tests/cluster/test_pool_demand.py runs it on a real
gateway and Ray."""

from __future__ import annotations

from actors.pool_demand import DEMAND_WINDOW_S, Demand, PoolPolicy


def test_a_policy_out_of_range_is_brought_into_it() -> None:
    assert PoolPolicy(-3, -1, 0, -1.0, -2.0) == PoolPolicy(0, 0, 1, 0.0, 0.0)
    assert PoolPolicy(minimum=5, maximum=2).maximum == 5  # never below its minimum


def test_the_target_is_the_minimum_plus_the_creations_expected_at_most_the_maximum() -> None:
    demand = Demand(PoolPolicy(minimum=2, maximum=9))
    assert demand.target(100.0) == 2
    for at in (100.0, 101.0, 102.0):
        demand.served(at)
    # Three in the window, none in the one before: a rising rate, 3 + 3/2 expected.
    assert demand.expected(102.0) == 4.5
    assert demand.target(102.0) == 2 + 5
    assert demand.last_target == 7
    demand.served(103.0)
    assert demand.target(103.0) == 2 + 6
    demand.served(104.0)
    assert demand.target(104.0) == 9  # capped: 2 + ceil(7.5) would be 10
    # Once they are all in the window before, the rate fell to none: the target with it.
    assert demand.target(104.1 + DEMAND_WINDOW_S) == 2
    assert demand.target(200.0) == 2
    assert demand.last_target == 2


def test_a_steady_rate_expects_the_same_again_and_a_rising_one_more() -> None:
    steady, rising = Demand(PoolPolicy(maximum=100)), Demand(PoolPolicy(maximum=100))
    for i in range(20):  # one a second for 20 s
        steady.served(100.0 + i)
    assert steady.expected(119.5) == 10.0  # as many as the last window
    for at in (100.0, 105.0, *(110.0 + i for i in range(8))):
        rising.served(at)  # 2 in the window before, 8 in the last: the rate quadrupled
    assert rising.expected(119.5) == 8 + (8 - 2) / 2
    falling = Demand(PoolPolicy(minimum=2, maximum=100))
    for i in range(8):
        falling.served(100.0 + i)
    falling.served(115.0)
    # 1 in the last window, 8 before: a rate falling fast expects none, never fewer.
    assert falling.expected(119.0) == 0.0
    assert falling.target(119.0) == 2


def test_the_floor_holds_the_target_and_lifts_the_maximum_with_it() -> None:
    demand = Demand(PoolPolicy(minimum=2, maximum=8))
    demand.floor = 40
    assert demand.target(100.0) == 40  # no creation yet: the floor
    assert demand.keep(100.0) == 40  # nor is the surplus trimmed below it
    for i in range(30):
        demand.served(100.0 + i * 0.1)
    assert demand.target(103.0) == 40  # 2 + 45 expected, capped by the floor as the maximum
    demand.floor = 0
    assert demand.target(103.0) == 8
    assert demand.keep(103.0) == 8


def test_while_creations_come_the_pool_keeps_up_to_its_maximum_then_its_target() -> None:
    demand = Demand(PoolPolicy(minimum=2, maximum=6))
    assert demand.keep(100.0) == 2  # no creation yet: the target
    demand.served(100.0)
    assert demand.target(105.0) == 4  # 2 + ceil(1.5)
    assert demand.keep(105.0) == 6  # ended tables' actors come back: none stopped for a start
    assert demand.keep(100.0 + DEMAND_WINDOW_S + 0.1) == 2  # a quiet window: back to the target


def test_the_last_waves_actors_are_kept_for_the_hold_up_to_its_most() -> None:
    demand = Demand(PoolPolicy(minimum=2, maximum=6, hold_s=300.0, hold_most=20))
    for i in range(30):  # a wave: 30 tables in a minute, whose actors come back as they end
        demand.served(100.0 + 2 * i)
    last = 158.0
    assert demand.keep(last + 1) == 20  # the wave's actors kept, at most `hold_most`
    # Past the demand window the maximum no longer holds, but the wave does.
    assert demand.keep(last + DEMAND_WINDOW_S + 1) == 20
    # As the wave ages out of the hold, fewer of its actors are kept.
    assert demand.keep(100.0 + 300.0 + 2 * 20 + 1) == 9
    assert demand.keep(last + 300.0 + 1) == 2  # the hold over: back to the target
    off = Demand(PoolPolicy(minimum=2, maximum=6))  # no hold: as before
    for i in range(30):
        off.served(100.0 + 2 * i)
    assert off.keep(last + DEMAND_WINDOW_S + 1) == 2


def test_a_ramp_lasts_while_creations_come_within_the_quiet_time() -> None:
    demand = Demand(PoolPolicy(quiet_s=3.0))
    assert not demand.in_ramp(10.0)  # no creation yet
    demand.served(10.0)
    assert demand.in_ramp(12.9)
    assert not demand.in_ramp(13.0)
    assert not Demand(PoolPolicy(quiet_s=0.0)).in_ramp(10.0)  # no quiet time: never a ramp


def test_unpaced_the_whole_shortfall_starts_at_once() -> None:
    demand = Demand(PoolPolicy(start_gap_s=0.0))
    assert demand.buffer_starts(4, starting=1, waiting=0, last_start_end=99.0, now=100.0) == (
        4,
        None,
    )
    paced = Demand(PoolPolicy(start_gap_s=2.0))
    assert paced.buffer_starts(0, 0, 0, 99.0, 100.0) == (0, None)  # nothing short


def test_paced_the_buffer_grows_one_start_at_a_time_each_a_gap_after_the_last() -> None:
    demand = Demand(PoolPolicy(start_gap_s=2.0))
    # The last start ended 0.5 s ago: none yet, and the refill looks again in 1.5 s.
    assert demand.buffer_starts(3, 0, 0, last_start_end=99.5, now=100.0) == (0, 1.5)
    assert demand.buffer_starts(3, 0, 0, last_start_end=98.0, now=100.0) == (1, None)
    # A start on its way for the buffer counts against it; one for a waiting creation is a
    # process starting too, so the buffer waits for its end.
    assert demand.buffer_starts(3, starting=1, waiting=0, last_start_end=0.0, now=100.0) == (
        1,
        None,
    )
    assert demand.buffer_starts(3, starting=1, waiting=1, last_start_end=0.0, now=100.0) == (
        0,
        None,
    )


def test_after_a_creation_the_refill_looks_again_after_the_ramp_and_after_the_window() -> None:
    quiet = Demand(PoolPolicy(quiet_s=3.0)).fall_back_passes()
    assert quiet == (3.1, DEMAND_WINDOW_S - 3.0 + 0.4, DEMAND_WINDOW_S)
    assert sum(quiet[:2]) > DEMAND_WINDOW_S  # one after the creation left the window
    assert sum(quiet) > 2 * DEMAND_WINDOW_S  # and one after it left the trend's window too
    assert Demand(PoolPolicy(quiet_s=0.0)).fall_back_passes() == (
        DEMAND_WINDOW_S + 0.5,
        DEMAND_WINDOW_S,
    )
    assert Demand(PoolPolicy(quiet_s=DEMAND_WINDOW_S)).fall_back_passes() == (
        DEMAND_WINDOW_S + 0.5,
        DEMAND_WINDOW_S,
    )
