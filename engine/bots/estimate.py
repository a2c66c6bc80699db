"""How likely is it that a seat holds a carré right now, judged only from what a bot has seen.

Every swap is public (R9), so some cards are known to sit in a seat's hand; the rest of the cards
nobody has shown lie somewhere in the other hands. For a rank whose other cards are all still
unaccounted for, the chance that they all sit in this seat's unknown slots is hypergeometric; and
since no hand is dealt three of a rank (R4), a carré needs two cards of its rank taken in plain
sight. A seat's behaviour shifts the odds: it takes cards of the rank it collects, and a player
who has just completed a carré tends to take the floor and emit straight after the swap that did
it.
"""

from __future__ import annotations

from functools import cache
from math import comb

from engine.bots.model import Model
from engine.cards import deck_for, ranks_for

# Likelihood ratios for behaviour, tuned on smart-vs-smart play (engine.tournament).
CHASE_LR = 3.0  # per card of the rank the seat took itself and still holds (at most two count)
EMIT_AFTER_SWAP_LR = 5.0  # an emission within a short while after the seat's last swap
REPEAT_LR = 1.5  # the same emoji shown again by that seat since its last swap
COLLECTOR = 0.45  # below this share of repeated takes, a seat's behaviour is not read


def carre_chances(model: Model) -> list[float]:
    """P(seat holds four of a rank now) for every seat, given the model's knowledge. The bot's
    own seat gets 0 here: it knows its own hand."""
    players = model.players
    rank_of = _rank_of(players)
    unknown_by_rank = dict(_full_deck_counts(players))
    for c in model.hand:
        unknown_by_rank[c.rank] -= 1
    for c in model.center:
        unknown_by_rank[c.rank] -= 1
    known_by_seat: list[dict[str, int]] = [{} for _ in range(players)]
    held = [0] * players
    for cid, s in model.holder.items():
        r = rank_of[cid]
        unknown_by_rank[r] -= 1
        counts = known_by_seat[s]
        counts[r] = counts.get(r, 0) + 1
        held[s] += 1
    total_unknown = sum(unknown_by_rank.values())
    # A dealt hand holds at most two of a rank (R4), so a carré needs two of that rank taken
    # from the centre since the deal, in plain sight.
    least_taken = 2 if model.saw_deal else 0
    out = [0.0] * players
    for seat in range(players):
        if seat == model.seat:
            continue
        known = known_by_seat[seat]
        slots = 4 - held[seat]
        if slots < 0 or len(known) > 1:
            continue
        ranks = list(known) if known else [r for r, n in unknown_by_rank.items() if n == 4]
        chance = 0.0
        for rank in ranks:
            if known.get(rank, 0) < least_taken:
                continue
            missing = 4 - known.get(rank, 0)
            if unknown_by_rank.get(rank, 0) != missing or missing > slots:
                continue
            if slots > total_unknown:
                chance += 1.0 if missing == 0 else 0.0
            else:
                chance += comb(total_unknown - missing, slots - missing) / comb(
                    total_unknown, slots
                )
        if chance <= 0.0:
            continue
        if chance >= 1.0:
            out[seat] = 1.0
            continue
        odds = chance / (1.0 - chance) * _behaviour_lr(model, seat, known)
        out[seat] = odds / (1.0 + odds)
    return out


@cache
def _rank_of(players: int) -> dict[str, str]:
    return {c.id: c.rank for c in deck_for(players)}


@cache
def _full_deck_counts(players: int) -> tuple[tuple[str, int], ...]:
    return tuple((rank, 4) for rank in ranks_for(players))


def seat_carre_chance(model: Model, seat: int) -> float:
    return carre_chances(model)[seat]


def _behaviour_lr(model: Model, seat: int, known_by_rank: dict[str, int]) -> float:
    if model.collects(seat) < COLLECTOR:
        return 1.0  # its takes look random: what it took and when it emits say little
    lr: float = CHASE_LR ** min(max(known_by_rank.values(), default=0), 2)
    last_swap = model.last_swap_at[seat]
    if last_swap is None:
        return lr
    window_end = last_swap + 3 * model.timings.swap_cooldown // 2
    since: list[str] = []
    soon = False
    for e in reversed(model.emissions):  # in time order, so stop at the seat's last swap
        if e.at < last_swap:
            break
        if e.seat == seat:
            since.append(e.emoji)
            soon = soon or e.at <= window_end
    if soon:
        lr *= EMIT_AFTER_SWAP_LR
    if len(since) >= 2 and len(set(since)) == 1:
        lr *= REPEAT_LR
    return lr


def team_carre_chance(model: Model, team: int, chances: list[float] | None = None) -> float:
    """P(either player of `team` holds a carré now)."""
    if chances is None:
        chances = carre_chances(model)
    miss = 1.0
    for seat in model.team_seats(team):
        miss *= 1.0 - chances[seat]
    return 1.0 - miss
