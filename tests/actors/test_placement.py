"""Where the pool's ready actors should run (actors/placement.py): the pure plan that moves
them, one at a time, toward each node's share of the pool by its room for them."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from actors.placement import evictions, plan, room, shares, with_tables


def after(pooled: dict[str, int], moves: list[tuple[str, str]]) -> Counter[str]:
    count = Counter(pooled)
    for src, dst in moves:
        count[src] -= 1
        count[dst] += 1
    return count


def test_the_ready_actors_of_a_crowded_node_move_to_the_one_that_joined() -> None:
    """The soak's shape after a loss: every table and every ready actor on the survivor, a
    replacement node empty. Its room is bigger, so it takes most of the pool."""
    pooled = {"survivor": 8}
    free = {"survivor": 2.0, "joined": 18.0}
    moves = plan(pooled, free)
    assert moves == [("survivor", "joined")] * 5
    assert after(pooled, moves) == Counter({"joined": 5, "survivor": 3})


def test_a_pool_within_one_actor_of_its_shares_stays_where_it_is() -> None:
    assert plan({"a": 2, "b": 2}, {"a": 10.0, "b": 10.0}) == []
    assert plan({"a": 3, "b": 1}, {"a": 10.0, "b": 10.0}) == []  # shares 2.17 and 1.83
    # A small node beside a big one (a test's node of 8 slots): a share under one actor.
    assert plan({"big": 2}, {"big": 100.0, "small": 8.0}) == []


def test_a_node_that_does_not_answer_has_no_share_and_its_actors_are_left_out() -> None:
    # "lost" is not in `free`: its two ready actors are neither moved nor counted (4 to
    # share, rooms 14 and 10: 2.33 and 1.67).
    assert plan({"lost": 2, "a": 4}, {"a": 10.0, "b": 10.0}) == [("a", "b")]


def test_where_the_autoscaler_works_a_node_without_tables_gets_no_ready_actor() -> None:
    total = {"busy": 16.0, "idle": 16.0}
    free = {"busy": 6.0, "idle": 14.0}  # busy: 8 tables and 2 ready; idle: 2 ready only
    kept = with_tables(free, total, {"busy": 2, "idle": 2})
    assert kept == {"busy": 6.0}
    assert plan({"busy": 2, "idle": 2}, kept) == []


def test_where_the_autoscaler_works_ready_actors_leave_the_nodes_that_carry_no_table() -> None:
    """Issue 48: an actor whose table ended goes back to the pool where it runs; a worker whose
    last table ended would then never be idle (each ready actor holds a table slot), and
    Ray's autoscaler could never remove it. They move to the nodes that carry tables, the one
    with the most free slots first."""
    free = {"busy": 10.0, "busier": 3.0, "ended": 57.0, "fresh": 60.0}
    holding = {"busy": 10.0, "busier": 3.0}
    moves = evictions({"ended": 3, "busy": 1}, free, holding)
    assert moves == [("ended", "busy")] * 3
    assert evictions({"ended": 3, "busy": 1}, free, {"busy": 1.5, "busier": 1.0}) == [
        ("ended", "busy"),
        ("ended", "busier"),
    ]  # no more room for the third: left for the next pass
    assert evictions({"busy": 4}, free, holding) == []  # all of them where tables are


def test_with_no_table_anywhere_the_node_holding_most_of_the_pool_keeps_it() -> None:
    """At night: the pool must live somewhere (the chart's minimum worker), and every other
    node is left idle for the autoscaler."""
    free = {"a": 58.0, "b": 59.0, "c": 60.0}
    assert sorted(evictions({"a": 2, "b": 1}, free, {})) == [("b", "a")]
    assert evictions({}, free, {}) == []
    # A node that does not answer is not moved from (Ray restarts its actors, or they drop).
    assert evictions({"a": 2, "lost": 3}, free, {}) == []


@given(
    st.dictionaries(
        st.sampled_from("abcdef"),
        st.tuples(st.integers(0, 12), st.integers(0, 40).map(float)),
        min_size=1,
    )
)
def test_a_plan_keeps_the_pool_brings_it_within_one_of_its_shares_and_never_flaps(
    nodes: dict[str, tuple[int, float]],
) -> None:
    pooled = {n: c for n, (c, _) in nodes.items()}
    free = {n: f for n, (_, f) in nodes.items()}
    moves = plan(pooled, free)
    count = after(pooled, moves)
    assert sum(count.values()) == sum(pooled.values())
    assert all(v >= 0 for v in count.values())
    share = shares(sum(pooled.values()), room(pooled, free))
    above = max(count[n] - share[n] for n in free)
    below = max(share[n] - count[n] for n in free)
    assert above < 1 or below < 1, (count, share)
    # Each node only gives or only takes: no actor goes back where another came from.
    givers = {src for src, _ in moves}
    takers = {dst for _, dst in moves}
    assert not givers & takers
    # The next pass has nothing to do: each move freed a slot where it left and took one
    # where it went, so every node's room is the same.
    free_after = {n: free[n] + pooled[n] - count[n] for n in free}
    assert all(f >= 0 for f in free_after.values())
    assert plan(dict(count), free_after) == []
