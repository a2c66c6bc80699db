"""Invariants under random play at 4, 6 and 8 players, checked after every step (R2–R4, R20,
R26, R28, R30), and bad input of every type changing nothing."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine import EMOJIS, ErrorCode, Outbound, Phase, Table, deck_for, team_of, team_seats
from engine.hints import carre_possible
from tests.engine.randomplay import JUNK, RandomGame, Record, apply, junk_command, steps_from

STEPS = st.binary(min_size=5 * 50, max_size=5 * 400).map(steps_from)
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CARD_KEYS = {"id", "rank", "suit"}
EMOJI_LIST = list(EMOJIS)
SEAT_ROW_KEYS = {"seat", "team", "name", "kind", "connected", "ready", "floor", "emoji"}
PUBLIC_EVENTS_WITHOUT_CARDS = {
    "seat",
    "signing",
    "ready",
    "sign",
    "floor",
    "emission",
    "vote",
    "voted",
    "vote_result",
    "pause",
    "over",
}
VIEW_KEYS = {
    "code",
    "players",
    "phase",
    "round",
    "host",
    "scores",
    "seats",
    "hand",
    "center",
    "sign",
    "deadline",
    "swap_ready_at",
    "floor_ready_at",
    "choice",
    "vote",
    "reshuffled",
    "vote_ready_at",
    "last_reveal",
    "winners",
    "emissions",
    "emojis",
    "settings",  # the host's bot level and hints: public
    "public",  # quick play: whether the table is public (no host): public
    "fills_at",  # quick play: when bots fill a public lobby (a public clock)
    "claims",  # (ext) requests for bots' seats during the match: public
    "net_taken",  # (ext) what each seat took from the centre, net: public like every swap
}


def cards_in(value: Any) -> list[str]:
    """Every card id anywhere inside a wire value."""
    if isinstance(value, dict):
        if set(value) == CARD_KEYS:
            return [value["id"]]
        return [c for v in value.values() for c in cards_in(v)]
    if isinstance(value, list):
        return [c for v in value for c in cards_in(v)]
    return []


def no_three_of_a_rank(hand: list[dict[str, str]]) -> bool:
    return max(Counter(card["rank"] for card in hand).values()) <= 2


class Referee:
    """Follows a table through its events only, the way the seats see it, and checks each step
    against the table's own snapshot."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.n = table.players
        self.deck = sorted(card.id for card in deck_for(self.n))
        self.rank_of = {card.id: card.rank for card in deck_for(self.n)}
        self.hands: list[list[str]] = [[] for _ in range(self.n)]
        self.center: list[str] = []
        self.signs: list[str | None] = [None] * (self.n // 2)
        self.scores = [0] * (self.n // 2)
        self.round = 0
        self.rounds_played = 0  # across rematches, unlike `round`
        self.matches_over = 0
        self.reshuffles: Counter[int] = Counter()
        self.last_reveal: dict[str, Any] | None = None
        self.last_at = 0
        self.emitted: list[str | None] = [None] * self.n
        self.emissions: list[dict[str, Any]] = []  # the round's, as every seat saw them
        # Ranks each seat took from the centre, net, since its hand was dealt: the swaps seen.
        self.net: list[Counter[str]] = [Counter() for _ in range(self.n)]

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.table.to_snapshot()["state"]
        return state

    def check(self, record: Record, before: str | None) -> None:
        if record.refusal is not None:
            assert before is not None
            assert json.dumps(self.table.to_snapshot(), sort_keys=True) == before, (
                f"refused {record.action} changed the table"
            )
        for i, o in enumerate(record.out):
            self.follow(o, record.out[i + 1 :])
        state = self.state()
        self.against_snapshot(state)
        for seat in (*range(self.n), None):
            self.check_view(seat, state)
        self.check_carres_possible(state)

    # -- events -------------------------------------------------------------------------------
    def follow(self, o: Outbound, rest: list[Outbound]) -> None:
        assert o.at >= self.last_at, "time ran backwards"
        self.last_at = o.at
        e: dict[str, Any] = o.event.to_wire()
        kind = e["type"]
        if kind in PUBLIC_EVENTS_WITHOUT_CARDS:
            assert cards_in(e) == [], f"{kind} carries cards"
        if kind == "sign":  # R5, R30: a sign travels to its own team only
            assert o.to.scope == "team"
            self.signs[o.to.index] = e["emoji"]
        elif kind in ("round", "reshuffled") and o.to.scope == "watch":
            # R30: watchers learn the deal's public part (centre, clock) and no card of a hand.
            assert e["hand"] == []
            assert [c["id"] for c in e["center"]] == self.center, "watchers saw another centre"
        elif kind in ("round", "reshuffled"):  # R3, R4, R30: a hand travels to its seat only
            assert o.to.scope == "seat"
            assert no_three_of_a_rank(e["hand"]), "a dealt hand holds three of a rank (R4)"
            assert len(e["hand"]) == 4
            assert len(e["center"]) == 4
            self.hands[o.to.index] = [c["id"] for c in e["hand"]]
            self.center = [c["id"] for c in e["center"]]
            self.net[o.to.index] = Counter()
        elif kind == "swapped":  # R9: both cards are public
            assert o.to.scope == "all"
            hand = self.hands[e["seat"]]
            assert self.center[e["slot"]] == e["taken"]["id"]
            hand[hand.index(e["placed"]["id"])] = e["taken"]["id"]
            self.center[e["slot"]] = e["placed"]["id"]
            self.net[e["seat"]][e["taken"]["rank"]] += 1
            self.net[e["seat"]][e["placed"]["rank"]] -= 1
        elif kind == "signing":
            self.round = e["round"]
            self.rounds_played += 1
            self.hands = [[] for _ in range(self.n)]
            self.center = []
            self.signs = [None] * (self.n // 2)
            self.emitted = [None] * self.n
            self.emissions = []
            self.net = [Counter() for _ in range(self.n)]
            if e["round"] == 1:  # a new match (Rematch) starts from zero
                self.scores = [0] * (self.n // 2)
                self.last_reveal = None
        elif kind == "vote_result" and e["passed"]:
            self.reshuffles[self.rounds_played] += 1
            assert self.reshuffles[self.rounds_played] <= 1, "two reshuffles in one round (R20)"
        elif kind == "emission":
            self.emitted[e["seat"]] = e["emoji"]
            self.emissions.append({"seat": e["seat"], "emoji": e["emoji"], "at": o.at})
        elif kind == "reveal":
            assert o.to.scope == "all"
            assert e["hands"] == [
                [{"id": c} | self.card(c) for c in hand] for hand in self.hands
            ], "the reveal shows other hands than were dealt and swapped"
            assert e["signs"] == self.signs
            scores = e["scores"]
            assert all(new >= old for old, new in zip(self.scores, scores, strict=True)), "R26"
            assert sum(scores) - sum(self.scores) == len(e["scored"])
            self.scores = scores
            self.last_reveal = e
            best = max(scores)
            assert best <= 5
            following = rest[0].event.to_wire() if rest else None
            assert following is not None
            if best == 5:  # R28: over at once, every team on the top score wins
                self.matches_over += 1
                assert following == {
                    "type": "over",
                    "winners": [k for k, v in enumerate(scores) if v == best],
                    "scores": scores,
                }
            else:
                assert following["type"] == "pause"

    def card(self, card_id: str) -> dict[str, str]:
        (card,) = [c for c in deck_for(self.n) if c.id == card_id]
        return {"rank": card.rank, "suit": card.suit}

    # -- the table's own image ----------------------------------------------------------------
    def against_snapshot(self, s: dict[str, Any]) -> None:
        phase = Phase(s["phase"])
        hands = [seat["hand"] for seat in s["seats"]]
        everything = sorted([c for hand in hands for c in hand] + s["center"])
        if phase in (Phase.PLAYING, Phase.PAUSE, Phase.OVER) and s["round"] > 0:
            assert everything == self.deck, "a card is lost, doubled or foreign (R2, R3)"
            assert all(len(hand) == 4 for hand in hands)
            assert hands == self.hands, "the seats were told other hands than they hold"
            assert s["center"] == self.center
        else:
            assert everything == [], "cards are held outside play (R6)"
        if phase in (Phase.PLAYING, Phase.PAUSE, Phase.OVER):
            assert s["signs"] == self.signs, "a sign was fixed without telling its team"
        assert s["scores"] == self.scores
        assert max(s["scores"]) <= 5
        if max(s["scores"]) == 5:
            assert phase is Phase.OVER
            best = max(s["scores"])
            assert s["winners"] == [k for k, v in enumerate(s["scores"]) if v == best]
        else:
            assert phase is not Phase.OVER

    def check_view(self, seat: int | None, s: dict[str, Any]) -> None:
        """R25, R30: a seat's view holds its own hand, the centre, its own team's sign, and
        nothing else private; an onlooker's holds nothing private."""
        v: dict[str, Any] = self.table.view(seat)
        assert set(v) == VIEW_KEYS
        hand = [c["id"] for c in v["hand"]]
        assert hand == (s["seats"][seat]["hand"] if seat is not None else [])
        assert [c["id"] for c in v["center"]] == s["center"]
        assert v["sign"] == (s["signs"][team_of(seat, self.n)] if seat is not None else None)
        assert v["last_reveal"] == self.last_reveal
        assert v["choice"] == (s["seats"][seat]["choice"] if seat is not None else None)
        assert v["emojis"] == EMOJI_LIST
        assert all(set(row) == SEAT_ROW_KEYS for row in v["seats"])
        assert v["vote"] is None or set(v["vote"]) == {"by", "voters", "deadline", "accepted"}
        assert [row["emoji"] for row in v["seats"]] == self.emitted
        # The round's latest emissions, public, as the events showed them (a reload keeps them).
        assert v["emissions"] == self.emissions[-8:]
        assert v["scores"] == self.scores
        # Public: the same for every seat, as the swaps showed it.
        assert v["net_taken"] == [{r: k for r, k in c.items() if k} for c in self.net]

    def check_carres_possible(self, s: dict[str, Any]) -> None:
        """A team holding a carré is never one that a Contre! "can only lose" against
        (engine.hints.carre_possible, from R4 and the public swaps)."""
        view = self.table.view(None)
        for team in range(self.n // 2):
            for seat in team_seats(team, self.n):
                held = {self.rank_of[c] for c in s["seats"][seat]["hand"]}
                if len(s["seats"][seat]["hand"]) == 4 and len(held) == 1:
                    assert carre_possible(view, team), (seat, held, view["net_taken"])


def run(players: int, seed: int, humans: frozenset[int], steps: list[tuple[int, int, int]]) -> None:
    game = RandomGame(players, seed, humans)
    event(f"{len(steps) // 100 * 100}+ steps")
    referee = Referee(game.table)
    for record in game.setup():
        referee.check(record, None)
    for step in steps:
        before = json.dumps(game.table.to_snapshot(), sort_keys=True)
        for record in game.play(step):
            # a refusal's record holds the clock's events; the command itself changed nothing
            referee.check(record, _after_clock(game, before, record))
    event(f"{referee.rounds_played // 5 * 5}+ rounds")
    event(f"{referee.matches_over} matches over")


def _after_clock(game: RandomGame, before: str, record: Record) -> str | None:
    """The table's image once the clock had moved to the command's time (what the command was
    judged against). A refusal's clock events changed the table; the command must not have."""
    if record.refusal is None:
        return None
    probe = Table.from_snapshot(json.loads(before))
    probe.advance(record.now)
    return json.dumps(probe.to_snapshot(), sort_keys=True)


def humans_for(players: int) -> st.SearchStrategy[frozenset[int]]:
    return st.frozensets(st.integers(0, players - 1)).map(lambda s: s | {0})


@SETTINGS
@given(seed=st.integers(0, 2**32), data=st.data(), steps=STEPS)
def test_r02_r30_invariants_hold_under_random_play_at_4(
    seed: int, data: st.DataObject, steps: list[tuple[int, int, int]]
) -> None:
    run(4, seed, data.draw(humans_for(4)), steps)


@SETTINGS
@given(seed=st.integers(0, 2**32), data=st.data(), steps=STEPS)
def test_r02_r30_invariants_hold_under_random_play_at_6(
    seed: int, data: st.DataObject, steps: list[tuple[int, int, int]]
) -> None:
    run(6, seed, data.draw(humans_for(6)), steps)


@SETTINGS
@given(seed=st.integers(0, 2**32), data=st.data(), steps=STEPS)
def test_r02_r30_invariants_hold_under_random_play_at_8(
    seed: int, data: st.DataObject, steps: list[tuple[int, int, int]]
) -> None:
    run(8, seed, data.draw(humans_for(8)), steps)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.sampled_from([4, 6, 8]),
    seed=st.integers(0, 1000),
    warmup=st.binary(max_size=5 * 60).map(steps_from),
    junk=st.tuples(st.integers(0, 2**16), st.integers(0, 2**20)),
)
def test_bad_input_of_every_type_never_crashes_and_changes_nothing(
    players: int, seed: int, warmup: list[tuple[int, int, int]], junk: tuple[int, int]
) -> None:
    game = RandomGame(players, seed, frozenset(range(players)))
    for _ in game.setup():
        pass
    for step in warmup:
        for _ in game.play(step):
            pass
    game.table.advance(game.now)
    before = json.dumps(game.table.to_snapshot(), sort_keys=True)
    record = apply(game.table, junk_command(*junk), game.now)
    for o in record.out:
        json.dumps(o.event.to_wire())  # whatever was accepted still speaks the protocol
    if record.refusal is not None:
        assert record.refusal.code in set(ErrorCode)
        assert record.out == []
        assert json.dumps(game.table.to_snapshot(), sort_keys=True) == before
        json.dumps(record.refusal.to_wire())


def test_junk_reaches_every_command_and_every_bad_value() -> None:
    kinds = {type(junk_command(a, 0)).__name__ for a in range(1, 200)}
    assert len(kinds) >= 18
    values = {repr(junk_command(1, b).seat) for b in range(0, 2**12)}
    assert len(values) >= len({repr(v) for v in JUNK}) - 1
