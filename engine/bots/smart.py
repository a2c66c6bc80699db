"""A bot that plays to win: it chases a carré, signals it, listens to its partner and watches the
other teams.

- Chase: it collects the rank that its hand and the centre make likeliest, and re-plans whenever
  the centre changes. It never competes for the rank its partner is visibly collecting, and puts
  a card of that rank down only to pass it on, when it has nothing else to give for its own.
- Keep the centre moving: when what it collects is not in the centre, after a few seconds it
  swaps something else (the card it needs least for the one its hand pairs best), as a person
  does; otherwise a table where everyone waits for a card someone else holds stands still.
- Signal: one swap from a carré it takes the floor, so that the moment the carré is complete it
  can emit its team's sign at once; at other times it may show a decoy.
- Listen: when its partner emits the team's sign, or was seen taking all four of a rank, it calls
  Quatro! after its level's reaction time (engine.bots.pacing: never sooner than a floor after
  the partner's latest swap or emission), whether or not it holds a carré itself: the call
  judges the partner's hand only (R15), so its own carré neither helps nor spoils it. When
  both partners hold a carré and show the sign, each calls, and the first call scores (R18).
  Its own carré it never calls on: it shows the sign and waits for the partner's call.
- Watch: it estimates each other team's chance of holding a carré (engine.bots.estimate) from
  the takes it still remembers (a level may forget them, engine.bots.model) and calls Contre! on
  the likeliest when the chance is high enough, naming the team (R17), no sooner than its
  level's floor after that team's latest swap or emission.
- Reshuffle: only when the centre is truly dead — nobody has taken a card from it for
  DEAD_CENTRE_COOLDOWNS swap cooldowns, and what it collects is not there — and at most once a
  round, whoever asked before (R19, R20); bots never vote.

Every delay comes from engine.bots.pacing; every random draw from the bot's own RNG, drawn when an
event arrives or the bot acts, so `plan` itself is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.bots.base import Bot, Intent
from engine.bots.estimate import carre_chances, team_carre_chance
from engine.bots.pacing import ACCUSE, CALL, NOTICE, Pace, Reaction
from engine.cards import RANKS, cards_by_id
from engine.commands import (
    CallContre,
    CallQuatro,
    ChooseSign,
    Command,
    Emit,
    NextRound,
    Ready,
    RequestVote,
    SetFloor,
    Swap,
)
from engine.config import Timings
from engine.legal import CardView
from engine.phase import Phase
from engine.seating import team_of
from engine.signs import EMOJIS

CONTRE_THRESHOLD = 0.6  # P(team holds a carré) above which it accuses that team
DECOY_CHANCE = 0.35  # rounds in which it shows a decoy
SIGN_CHANCE = 0.5  # signing phases in which it picks the sign itself
# Nobody took a centre card for this many swap cooldowns (40 s of a round's 180): the centre is
# dead. Shorter, and a table where players merely wait asks for a reshuffle in most rounds.
DEAD_CENTRE_COOLDOWNS = 20
MEMORY_MS = 45_000  # how long a seen take stays in mind, on average (the normal level's)


def has_carre(hand: list[CardView]) -> bool:
    return len(hand) == 4 and all(c.rank == hand[0].rank for c in hand)


class SmartBot(Bot):
    kind = "smart"

    def __init__(
        self,
        seat: int,
        players: int,
        *,
        seed: int,
        speed: float = 1.0,
        timings: Timings | None = None,
        contre_threshold: float = CONTRE_THRESHOLD,
        decoy_chance: float = DECOY_CHANCE,
        tempo: float = 1.0,
        call: Reaction = CALL,
        accuse: Reaction = ACCUSE,
        memory_ms: int | None = MEMORY_MS,
        notice: Reaction = NOTICE,
    ) -> None:
        super().__init__(seat, players, seed=seed, speed=speed, timings=timings)
        self.pace = Pace(speed, tempo=tempo, call=call, accuse=accuse, notice=notice)
        self.contre_threshold = contre_threshold
        self.decoy_chance = decoy_chance
        self.memory_ms = memory_ms
        self.target: str | None = None
        self._swap_gap = 0
        self._slot_seen = [0, 0, 0, 0]  # when this bot notices each centre slot's card
        self._carre_at: int | None = None
        self._one_away_at: int | None = None
        self._quatro_at: int | None = None
        self._contre_at: dict[int, int] = {}
        self._team_moved_at: dict[int, int] = {}  # each team's latest swap or emission
        self._restless_at = 0
        self._placed_last: str | None = None
        self._decoy_at: int | None = None
        self._decoy_emoji = 0
        self._release_at = 0
        self._ready_at = 0
        self._sign_at: int | None = None
        self._sign_emoji = 0
        self._next_round_at = 0
        self._chances: list[float] = [0.0] * players

    # -- reacting to events (all randomness is drawn here) ------------------------------------
    def on_sync(self, now: int) -> None:
        self._new_deal(now)
        self._ready_at = now + self.pace.reaction(self.rng)
        self._next_round_at = now + self.pace.linger(self.rng)
        self._after_change(now)

    def on_event(self, event: Mapping[str, Any], at: int) -> None:
        kind = event.get("type")
        m = self.model
        m.fade(at)
        if kind in ("swapped", "emission"):
            self._seen_move(int(event["seat"]), at)
        if kind == "signing":
            self._ready_at = at + self.pace.think(self.rng)
            self._sign_at = None
            if self.rng.random() < SIGN_CHANCE:
                self._sign_at = at + self.pace.think(self.rng)
                self._sign_emoji = self.rng.randrange(len(EMOJIS))
        elif kind == "round":
            self._new_deal(at)
            self._decoy_at = None
            if self.rng.random() < self.decoy_chance:
                span = 12 * m.timings.swap_cooldown
                self._decoy_at = at + m.timings.swap_cooldown + self.rng.randrange(span)
                self._decoy_emoji = self.rng.randrange(len(EMOJIS))
        elif kind == "reshuffled":
            self._new_deal(at)
        elif kind == "swapped":
            seat = int(event["seat"])
            if seat == m.seat:
                self._swapped(event, at)
            else:
                self._slot_seen[int(event["slot"])] = at + self.pace.notice_card(self.rng)
                if self.memory_ms is not None:
                    taken = str(event["taken"]["id"])
                    m.remember(taken, at + self.pace.span(self.rng, self.memory_ms))
        elif kind == "emission":
            seat = int(event["seat"])
            if seat == m.partner and event.get("emoji") == m.sign and self._quatro_at is None:
                self._heard_sign(at)
            if seat == m.seat and event.get("emoji") != m.sign:
                self._decoy_at = None  # shown once; now let the floor go
                self._release_at = at + self.pace.reaction(self.rng)
        elif kind == "floor":
            if int(event["seat"]) == m.seat and event.get("open") and has_carre(m.hand):
                # The floor is open; picking the sign in the list takes a moment more.
                self._carre_at = max(self._carre_at or 0, at + self.pace.quick(self.rng))
        elif kind == "pause":
            self._next_round_at = at + self.pace.linger(self.rng)
        if kind in ("swapped", "emission", "floor", "round", "reshuffled"):
            self._after_change(at)

    def _swapped(self, event: Mapping[str, Any], at: int) -> None:
        """This bot's own swap went through."""
        m = self.model
        self._swap_gap = self.pace.swap_gap(self.rng)
        self._restless_at = at + self.pace.restless(self.rng)
        self._placed_last = str(event["placed"]["id"])
        if has_carre(m.hand):
            self._carre_at = at + self.pace.quick(self.rng)
        elif self.target is not None and m.hand_ranks().get(self.target, 0) == 3:
            self._one_away_at = at + self.pace.quick(self.rng)

    def _seen_move(self, seat: int, at: int) -> None:
        """Any seat's swap or emission: new evidence, so a call about it waits for its floor."""
        m = self.model
        self._team_moved_at[team_of(seat, m.players)] = at
        if seat == m.partner and self._quatro_at is not None:
            self._quatro_at = max(self._quatro_at, at + self.pace.call_floor())

    def _heard_sign(self, at: int) -> None:
        """The partner showed the team's sign."""
        self._quatro_at = at + self.pace.call_reaction(self.rng)

    def _new_deal(self, at: int) -> None:
        self.target = None
        self._swap_gap = self.pace.swap_gap(self.rng)
        self._restless_at = at + self.pace.restless(self.rng)
        self._placed_last = None
        self._team_moved_at = {}
        self._slot_seen = [at + self.pace.notice_card(self.rng) for _ in range(4)]
        self._carre_at = None
        self._one_away_at = None
        self._quatro_at = None
        self._contre_at = {}
        if has_carre(self.model.hand):
            self._carre_at = at + self.pace.reaction(self.rng)

    def _after_change(self, at: int) -> None:
        """Re-judge the other teams, and the partner's hand, after anything public changed."""
        m = self.model
        if m.phase is not Phase.PLAYING:
            return
        chances = carre_chances(m)
        self._chances = chances
        for team in m.opposing_teams():
            confident = team_carre_chance(m, team, chances) >= self.contre_threshold
            if confident and team not in self._contre_at:
                self._contre_at[team] = at + self.pace.deliberate(self.rng)
            elif not confident:
                self._contre_at.pop(team, None)
            if team in self._contre_at and team in self._team_moved_at:
                floor = self._team_moved_at[team] + self.pace.accuse_floor()
                self._contre_at[team] = max(self._contre_at[team], floor)
        if self._quatro_at is None and self._partner_surely_has_carre():
            self._quatro_at = at + self.pace.call_reaction(self.rng)

    def _partner_surely_has_carre(self) -> bool:
        """The partner was seen taking all four cards of one rank and has put none down."""
        m = self.model
        ranks = [_rank_of(cid, m.players) for cid in m.known_hand(m.partner)]
        return len(ranks) == 4 and len(set(ranks)) == 1

    def on_sent(self, command: Command, now: int) -> None:
        if isinstance(command, SetFloor) and not command.open:
            self._release_at = 0

    # -- the plan (deterministic) -------------------------------------------------------------
    def plan(self, now: int) -> Intent | None:
        m = self.model
        if m.phase is Phase.SIGNING:
            return self._plan_signing()
        if m.phase is Phase.PAUSE:
            if m.seat == 0:
                return Intent(NextRound(seat=m.seat), self._next_round_at)
            return None
        if m.phase is not Phase.PLAYING:
            return None
        if not has_carre(m.hand):
            self.target = self.choose_target()
        options = [
            *self._plan_calls(),
            *self._plan_signal(),
            *self._plan_swap(),
            *self._plan_reshuffle(),
        ]
        if not options:
            return None
        return min(options, key=lambda i: i.at)  # the first listed wins a tie

    def _plan_signing(self) -> Intent | None:
        m = self.model
        seat = m.seat
        options = []
        if not m.ready[seat]:
            options.append(Intent(Ready(seat=seat), self._ready_at))
        if m.sign is None and self._sign_at is not None:
            options.append(
                Intent(ChooseSign(seat=seat, emoji=EMOJIS[self._sign_emoji]), self._sign_at)
            )
        return min(options, key=lambda i: i.at) if options else None

    def _plan_calls(self) -> list[Intent]:
        m = self.model
        out: list[Intent] = []
        if self._quatro_at is not None:
            out.append(Intent(CallQuatro(seat=m.seat), self._quatro_at))
        if self._contre_at:
            chances = self._chances
            team = max(self._contre_at, key=lambda k: (team_carre_chance(m, k, chances), -k))
            out.append(Intent(CallContre(seat=m.seat, team=team), self._contre_at[team]))
        return out

    def _plan_signal(self) -> list[Intent]:
        m = self.model
        seat = m.seat
        floor_open = m.floors[seat]
        if has_carre(m.hand) and m.sign is not None:
            at = self._carre_at if self._carre_at is not None else 0
            if not floor_open:
                return [Intent(SetFloor(seat=seat, open=True), max(at, m.floor_ready_at))]
            if m.choice != m.sign:
                return [Intent(Emit(seat=seat, emoji=m.sign), at)]
            return []
        if floor_open and m.choice is not None and m.choice == m.sign:
            # The carré is gone (a reshuffle, or broken for the partner's sake): the floor must
            # stop showing the sign before the partner hears it again.
            return [Intent(Emit(seat=seat, emoji=self._decoy()), 0)]
        one_away = self._one_away_at is not None and self._count(self.target) == 3
        if one_away:
            if not floor_open:
                at = max(self._one_away_at or 0, m.floor_ready_at)
                return [Intent(SetFloor(seat=seat, open=True), at)]
            return []
        if self._decoy_at is not None:
            if not floor_open:
                return [
                    Intent(SetFloor(seat=seat, open=True), max(self._decoy_at, m.floor_ready_at))
                ]
            if m.choice is None:
                return [Intent(Emit(seat=seat, emoji=self._decoy()), self._decoy_at)]
            return []
        if floor_open:
            return [
                Intent(SetFloor(seat=seat, open=False), max(self._release_at, m.floor_ready_at))
            ]
        return []

    def _decoy(self) -> str:
        emoji = EMOJIS[self._decoy_emoji]
        return EMOJIS[(self._decoy_emoji + 1) % len(EMOJIS)] if emoji == self.model.sign else emoji

    def _count(self, rank: str | None) -> int:
        return sum(1 for c in self.model.hand if c.rank == rank) if rank else 0

    def partner_chase(self) -> str | None:
        """The rank the partner visibly collects: that of the last card it took from the centre,
        while it still holds that card and has not put that rank down since."""
        m = self.model
        for seen in reversed(m.swaps):
            if seen.seat == m.partner:
                card = seen.taken
                if (
                    m.holder.get(card.id) == m.partner
                    and card.rank not in m.placed_ranks[m.partner]
                ):
                    return card.rank
                return None
        return None

    def choose_target(self) -> str | None:
        m = self.model
        locked = self.partner_chase()
        hand: dict[str, int] = m.hand_ranks()
        center: dict[str, int] = {}
        for c in m.center:
            center[c.rank] = center.get(c.rank, 0) + 1
        held_by_others: dict[str, int] = {}
        per_opponent: dict[tuple[int, str], int] = {}
        for cid, s in m.holder.items():
            rank = _rank_of(cid, m.players)
            held_by_others[rank] = held_by_others.get(rank, 0) + 1
            if s != m.partner:
                per_opponent[(s, rank)] = per_opponent.get((s, rank), 0) + 1
        # How many of a rank the keenest opponent collecting it is known to hold.
        contested: dict[str, int] = {}
        for (_, rank), n in per_opponent.items():
            contested[rank] = max(contested.get(rank, 0), n)
        best: tuple[float, int, int] | None = None
        choice: str | None = None
        for rank in set(hand) | set(center):
            if rank == locked:
                continue
            value = (
                hand.get(rank, 0)
                + 0.8 * center.get(rank, 0)
                - 0.6 * held_by_others.get(rank, 0)
                - 0.8 * contested.get(rank, 0)
                + (0.6 if rank == self.target else 0.0)
            )
            key3 = (value, hand.get(rank, 0), -RANKS.index(rank))
            if best is None or key3 > best:
                best, choice = key3, rank
        return choice

    def _plan_swap(self) -> list[Intent]:
        m = self.model
        if len(m.center) != 4 or has_carre(m.hand):
            return []  # a carré is kept: the partner's call on it is the point
        target = self.target
        if target is None:
            return []
        locked = self.partner_chase()
        ready = m.swap_ready_at + self._swap_gap
        slots = [s for s, c in enumerate(m.center) if c.rank == target]
        placeable = [c for c in m.hand if c.rank != target and c.rank != locked]
        # Holding nothing else, it passes the partner's rank on: the partner may take it back.
        placeable = placeable or [c for c in m.hand if c.rank != target]
        if not placeable:
            return []
        if slots:
            slot = min(slots, key=lambda s: (self._slot_seen[s], s))
            card = min(placeable, key=self._placing_cost)
            at = max(ready, self._slot_seen[slot])
            return [Intent(self._swap(card, slot), at)]
        fishing = self._fishing_swap(placeable, locked)
        if fishing is None:
            return []
        card, slot = fishing
        at = max(ready, self._restless_at, self._slot_seen[slot])
        return [Intent(self._swap(card, slot), at)]

    def _swap(self, card: CardView, slot: int) -> Swap:
        m = self.model
        return Swap(seat=m.seat, card=card.id, slot=slot, expect=m.center[slot].id)

    def _fishing_swap(
        self, placeable: list[CardView], locked: str | None
    ) -> tuple[CardView, int] | None:
        """What it swaps when its own rank is not in the centre: the card it needs least, for
        the centre card its hand pairs best (never the partner's rank, nor the card it has just
        put down)."""
        m = self.model
        card = min(placeable, key=self._placing_cost)
        counts = m.hand_ranks()
        counts[card.rank] -= 1
        slots = [
            s
            for s, c in enumerate(m.center)
            if c.rank not in (locked, card.rank) and c.id != self._placed_last
        ]
        if not slots:
            return None
        slot = min(slots, key=lambda s: (-counts.get(m.center[s].rank, 0), self._slot_seen[s], s))
        return card, slot

    def _placing_cost(self, card: CardView) -> tuple[int, int, int]:
        """Put down what helps the other teams least: a rank no opponent is known to collect,
        and of those the one this hand holds fewest of."""
        m = self.model
        per_seat: dict[int, int] = {}
        for cid, s in m.holder.items():
            if s != m.partner and _rank_of(cid, m.players) == card.rank:
                per_seat[s] = per_seat.get(s, 0) + 1
        danger = max(per_seat.values(), default=0)
        return (danger, self._count(card.rank), int(card.id[1:]))

    def _plan_reshuffle(self) -> list[Intent]:
        m = self.model
        if m.reshuffled or m.vote is not None or m.vote_round == m.round:
            return []  # one request a round, whoever made it (R20 would allow more)
        if self._quatro_at is not None or has_carre(m.hand):
            return []
        target = self.target
        if target is not None and any(c.rank == target for c in m.center):
            return []
        at = m.centre_moved_at + DEAD_CENTRE_COOLDOWNS * m.timings.swap_cooldown
        ready = m.vote_ready_at
        if ready is not None:
            at = max(at, ready)
        return [Intent(RequestVote(seat=m.seat), at)]


def _rank_of(card_id: str, players: int) -> str:
    return cards_by_id(players)[card_id].rank
