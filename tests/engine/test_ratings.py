"""Ratings from matches (issue 36): OpenSkill over the teams and their final scores, shared
wins as ties, bots at fixed ratings per level, late joiners and practice tables not rated; the
match's result read from the table itself; quick play's band. Issue 46: a match is rated only
when two teams each have a person who played it all; a rating is provisional for its first
ten rated matches."""

from __future__ import annotations

import pytest

from engine import (
    AddBot,
    CallQuatro,
    ChangeSettings,
    ClaimSeat,
    NextRound,
    Phase,
    Rematch,
    StartMatch,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.ratings import (
    ANY_LEVEL,
    BAND_START,
    BOT_RATINGS,
    ESTABLISHED_AFTER,
    NEW,
    REPEATS_COUNTED,
    UNRATED,
    Facts,
    MatchResult,
    Rating,
    SeatResult,
    band,
    counts,
    provisional,
    rate,
    to_establish,
    weight,
    why_unrated,
)
from tests.engine.tables import Game


def result(
    scores: tuple[int, ...],
    humans: dict[int, str],
    bot_level: str = "normal",
    practice: bool = False,
) -> MatchResult:
    n = 2 * len(scores)
    seats = tuple(
        SeatResult(seat=s, team=s % (n // 2), player_id=humans.get(s), name=f"S{s}")
        for s in range(n)
    )
    return MatchResult(1, n, scores, seats, bot_level, practice, 0)


def test_a_new_player_starts_at_1000_and_the_winners_climb_while_the_losers_fall() -> None:
    assert NEW.display == 1000
    assert NEW.level == 1000
    after = rate(result((5, 3), {0: "a", 2: "b", 1: "c", 3: "d"}), {})
    assert after["a"] == after["b"], "partners of one team move together"
    assert after["a"].mu > NEW.mu > after["c"].mu
    assert after["a"].sigma < NEW.sigma, "every match makes the model surer"
    assert after["c"].display < after["a"].display


def test_teams_that_win_together_share_the_win_as_a_tie() -> None:
    humans = {s: f"p{s}" for s in range(6)}
    after = rate(result((5, 5, 2), humans), {})
    assert after["p0"].mu == pytest.approx(after["p1"].mu)
    assert after["p0"].mu > NEW.mu > after["p2"].mu
    # A tie between two equal sides moves neither side's skill.
    level = rate(result((5, 5), {0: "a", 1: "b", 2: "c", 3: "d"}), {})
    assert level["a"].mu == pytest.approx(NEW.mu) == pytest.approx(level["b"].mu)


def test_only_the_order_of_the_final_scores_matters_not_the_margin() -> None:
    humans = {0: "a", 1: "b", 2: "c", 3: "d"}
    assert rate(result((5, 4), humans), {}) == rate(result((5, 0), humans), {})


def test_beating_a_stronger_team_earns_more_than_beating_a_weaker_one() -> None:
    strong = {"c": Rating(35, 2), "d": Rating(35, 2)}
    weak = {"c": Rating(15, 2), "d": Rating(15, 2)}
    humans = {0: "a", 2: "b", 1: "c", 3: "d"}
    upset = rate(result((5, 2), humans), strong)["a"].mu
    expected = rate(result((5, 2), humans), weak)["a"].mu
    assert upset > expected > NEW.mu


def test_bots_play_at_their_level_and_are_never_rated() -> None:
    assert BOT_RATINGS["relaxed"].mu < BOT_RATINGS["normal"].mu < BOT_RATINGS["sharp"].mu
    gains = {}
    for level in BOT_RATINGS:
        after = rate(result((5, 1), {0: "me"}, bot_level=level), {})
        assert set(after) == {"me"}
        gains[level] = after["me"].mu - NEW.mu
    assert 0 < gains["relaxed"] < gains["normal"] < gains["sharp"]
    losses = {
        level: rate(result((1, 5), {0: "me"}, bot_level=level), {})["me"].mu - NEW.mu
        for level in BOT_RATINGS
    }
    assert losses["relaxed"] < losses["normal"] < losses["sharp"] < 0


def test_a_veterans_rating_still_moves() -> None:
    veteran = {"a": Rating(30, 0.1)}
    after = rate(result((1, 5), {0: "a"}), veteran)
    assert after["a"].sigma >= 0.8
    assert after["a"].mu < 30


def test_a_match_against_bots_alone_changes_nothing() -> None:
    """The issue's case: one person, their partner a bot too, against bots."""
    for n in (4, 6, 8):
        lone = result((1, 5) + (0,) * (n // 2 - 2), {0: "me"})
        assert why_unrated(lone) == "bots"
        assert not counts(lone)
    assert why_unrated(result((5, 0), {})) == "bots", "nobody at all"


def test_two_partners_against_bots_alone_are_not_rated() -> None:
    partners = result((5, 2), {0: "a", 2: "b"})
    assert partners.teams_of_people() == (0,)
    assert why_unrated(partners) == "bots"
    six = result((5, 2, 1), {0: "a", 3: "b"})  # seats 0 and 3: team 0 at 6 seats
    assert why_unrated(six) == "bots"


def test_one_person_on_each_of_two_teams_is_rated_and_the_bots_weigh_at_their_level() -> None:
    for n in (4, 6, 8):
        two = result((5, 3) + (0,) * (n // 2 - 2), {0: "a", 1: "b"})
        assert two.teams_of_people() == (0, 1)
        assert why_unrated(two) is None
        assert counts(two)
    # At 6 seats the bots fill a whole team and a seat of each of the others: their level
    # moves the people's ratings, as a team's strength does.
    gains = {
        level: rate(result((5, 3, 0), {0: "a", 1: "b"}, bot_level=level), {})["a"].mu
        for level in BOT_RATINGS
    }
    assert gains["relaxed"] < gains["normal"] < gains["sharp"]
    assert set(rate(result((5, 3, 0), {0: "a", 1: "b"}), {})) == {"a", "b"}


def test_practice_tables_never_count() -> None:
    assert why_unrated(result((5, 3), {0: "a", 1: "b"}, practice=True)) == "practice"
    assert why_unrated(result((5, 0), {0: "a"}, practice=True)) == "practice"
    assert set(UNRATED) == {"practice", "bots", "same_person", "repeated", "profile"}


def test_two_rated_people_seen_at_one_address_rate_nobody() -> None:
    """Issue 47: one person with two profiles at one table (one losing on purpose, or both
    holding one team and its sign) looks like two profiles seen at one address."""
    opponents = result((5, 0), {0: "a", 1: "b"})
    assert why_unrated(opponents, Facts(frozenset({frozenset({"a", "b"})}))) == "same_person"
    partners = result((5, 0, 2), {0: "a", 3: "b", 1: "c"})  # a and b share team 0
    assert why_unrated(partners, Facts(frozenset({frozenset({"a", "b"})}))) == "same_person"
    # A pair the match does not rate (one of them not at the table) changes nothing.
    assert why_unrated(opponents, Facts(frozenset({frozenset({"a", "z"})}))) is None
    # The reasons of the match itself come first: a practice table is said to be one.
    alone = result((5, 0), {0: "a", 1: "b"}, practice=True)
    assert why_unrated(alone, Facts(frozenset({frozenset({"a", "b"})}))) == "practice"
    assert counts(opponents)
    assert not counts(opponents, Facts(frozenset({frozenset("ab")})))


def test_the_same_opponents_weigh_less_each_match_of_a_day_then_not_at_all() -> None:
    match = result((5, 2), {0: "a", 1: "b"})
    assert match.opponents() == (("a", "b"),)
    assert result((5, 2, 1), {0: "b", 3: "a", 1: "c"}).opponents() == (("a", "c"), ("b", "c"))
    assert [weight(Facts(met=k)) for k in range(4)] == [1.0, 0.5, 1 / 3, 0.25]
    assert [why_unrated(match, Facts(met=k)) for k in (0, 4, 5, 9)] == [
        None,
        None,
        "repeated",
        "repeated",
    ]
    assert REPEATS_COUNTED == 5
    # A match of weight 1 rates as before; of weight 1/2, it moves μ half as far, σ² too.
    whole = rate(match, {})
    assert rate(match, {}, 1.0) == whole
    half = rate(match, {}, weight(Facts(met=1)))
    for p in ("a", "b"):
        assert half[p].mu - NEW.mu == pytest.approx((whole[p].mu - NEW.mu) / 2)
        assert half[p].sigma ** 2 - NEW.sigma**2 == pytest.approx(
            (whole[p].sigma ** 2 - NEW.sigma**2) / 2
        )
    with pytest.raises(ValueError, match="weight"):
        rate(match, {}, 0.0)


def test_a_rating_is_provisional_for_its_first_matches() -> None:
    assert ESTABLISHED_AFTER == 10
    assert [provisional(n) for n in (0, 1, 9, 10, 11)] == [True, True, True, False, False]
    assert [to_establish(n) for n in (0, 3, 9, 10, 40)] == [10, 7, 1, 0, 0]


def test_the_table_gives_the_result_of_its_match_once_it_is_over() -> None:
    g = Game(6, humans=[0, 1, 4], connected=[])
    assert g.table.result() is None
    assert g.table.match == 1
    for _ in range(4):
        g.do(CallQuatro(seat=2))  # wrong: teams 0 and 1 score
        g.do(NextRound(seat=0))
    g.do(CallQuatro(seat=5))
    assert g.phase() is Phase.OVER
    r = g.table.result()
    assert r is not None
    assert (r.match, r.players, r.scores, r.winners) == (1, 6, (5, 5, 0), (0, 1))
    assert r.rated() == ("p0", "p1", "p4")
    assert why_unrated(r) is None
    assert [s.team for s in r.seats] == [0, 1, 2, 0, 1, 2]
    assert r.won("p0")
    assert r.won("p4")
    assert not r.won("p9")
    assert r.ended_at == g.now
    assert r.bot_level == "normal"
    assert not r.practice
    # The result survives a snapshot, as the table's actor would restore it.
    again = Table.from_snapshot(g.table.to_snapshot())
    assert again.result() == r
    g.do(Rematch(seat=0))
    assert g.table.match == 2
    assert g.table.result() is None


def test_a_seat_taken_from_a_bot_during_the_match_is_not_rated() -> None:
    g = Game(4, humans=[0], connected=[], start=False)
    g.do(ChangeSettings(seat=0, late_join="always"))
    g.do(StartMatch(seat=0))
    g.do(ClaimSeat(seat=2, player_id="late", name="Late", watching=True))
    g.do(CallQuatro(seat=1))  # wrong: team 0 scores
    g.do(NextRound(seat=0))  # the newcomer takes seat 2 at this signing
    assert g.table.seat_of("late") == 2
    for _ in range(4):
        if g.phase() is Phase.PAUSE:
            g.do(NextRound(seat=0))
        g.do(CallQuatro(seat=1))
    r = g.table.result()
    assert r is not None
    assert r.rated() == ("p0",)
    assert r.seats[2].name == "Late"
    # The newcomer took a bot's seat on the other team: that team has no person who played
    # the match from its first round, so the match is one person's against bots.
    assert r.teams_of_people() == (0,)
    assert why_unrated(r) == "bots"


def test_a_practice_table_says_so_in_its_result_and_its_snapshot() -> None:
    t = Table(TableConfig(players=4, seed=1, practice=True))
    t.apply(TakeSeat(seat=0, player_id="me", name="Me"), 0)
    for s in (1, 2, 3):
        t.apply(AddBot(seat=0, target=s), 0)
    t.apply(StartMatch(seat=0), 0)
    while t.phase is not Phase.OVER:
        if t.phase is Phase.PAUSE:
            t.apply(NextRound(seat=0), 0)
        t.apply(CallQuatro(seat=1), 0)  # a bot's wrong call: team 0 scores
    t = Table.from_snapshot(t.to_snapshot())
    r = t.result()
    assert r is not None
    assert r.practice
    assert r.rated() == ("me",)
    assert why_unrated(r) == "practice"


def test_an_old_snapshot_without_ratings_fields_reads_as_a_first_match() -> None:
    g = Game(4, humans=[0], connected=[])
    snap = g.table.to_snapshot()
    for key in ("match", "lineup", "ended_at"):
        del snap["state"][key]
    del snap["state"]["config"]["practice"]
    old = Table.from_snapshot(snap)
    assert old.match == 1
    assert not old.config.practice


def test_quick_plays_band_widens_with_the_wait_and_takes_anyone_before_the_bots() -> None:
    fill = 60_000
    assert band(0, fill) == BAND_START
    widths = [band(ms, fill) for ms in range(0, 45_000, 1_000)]
    assert widths == sorted(widths)
    assert widths[-1] < ANY_LEVEL
    assert band(45_000, fill) == ANY_LEVEL == band(fill, fill)
    assert band(22_500, fill) == pytest.approx((BAND_START + 2_000) / 2, abs=1)
    assert band(-5, fill) == BAND_START  # a clock a little behind
    assert band(0, 8_000) == BAND_START
    assert band(6_000, 8_000) == ANY_LEVEL
