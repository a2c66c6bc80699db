"""How likely is it that a seat holds a carré right now, judged only from what a bot has seen.

Every swap is public (R9), so some cards are known to sit in a seat's hand; the rest of the cards
nobody has shown lie somewhere in the other hands. For a rank whose other cards are all still
unaccounted for, the chance that they all sit in this seat's unknown slots is hypergeometric. A
seat's behaviour shifts the odds: it takes cards of the rank it collects, and a player who has
just completed a carré tends to take the floor and emit straight after the swap that did it.
"""

from __future__ import annotations

from math import comb

from engine.bots.model import Model
from engine.cards import deck_for

# Likelihood ratios for behaviour, tuned on smart-vs-smart play (engine.tournament).
CHASE_LR = 3.0  # per card of the rank the seat took itself and still holds (at most two count)
EMIT_AFTER_SWAP_LR = 5.0  # an emission within a short while after the seat's last swap
REPEAT_LR = 1.5  # the same emoji shown again by that seat since its last swap


def seat_carre_chance(model: Model, seat: int) -> float:
    """P(seat holds four of a rank now), given the model's knowledge. `seat` is another seat."""
    players = model.players
    mine = {c.id for c in model.hand}
    center = {c.id for c in model.center}
    holder = model.holder
    deck = deck_for(players)
    unknown = [c for c in deck if c.id not in mine and c.id not in center and c.id not in holder]
    total_unknown = len(unknown)
    known = [cid for cid, s in holder.items() if s == seat]
    slots = 4 - len(known)
    if slots < 0:
        return 0.0
    rank_of = {c.id: c.rank for c in deck}
    known_by_rank: dict[str, int] = {}
    for cid in known:
        r = rank_of[cid]
        known_by_rank[r] = known_by_rank.get(r, 0) + 1
    unknown_by_rank: dict[str, int] = {}
    for c in unknown:
        unknown_by_rank[c.rank] = unknown_by_rank.get(c.rank, 0) + 1
    # The ranks the hand could be a carré of: every known card must share it.
    candidates = set(known_by_rank) if known_by_rank else set(unknown_by_rank)
    if len(candidates) > 1:
        return 0.0
    chance = 0.0
    for rank in candidates:
        k = known_by_rank.get(rank, 0)
        missing = 4 - k
        if unknown_by_rank.get(rank, 0) != missing or missing > slots:
            continue
        if total_unknown == 0 or slots > total_unknown:
            p = 1.0 if missing == 0 else 0.0
        else:
            p = comb(total_unknown - missing, slots - missing) / comb(total_unknown, slots)
        chance += p
    if chance <= 0.0:
        return 0.0
    if chance >= 1.0:
        return 1.0
    odds = chance / (1.0 - chance) * _behaviour_lr(model, seat, known_by_rank)
    return odds / (1.0 + odds)


def _behaviour_lr(model: Model, seat: int, known_by_rank: dict[str, int]) -> float:
    lr = 1.0
    taken = max(known_by_rank.values(), default=0)
    lr *= CHASE_LR ** min(taken, 2)
    last_swap = model.last_swap_at[seat]
    window = 3 * model.timings.swap_cooldown // 2
    shown = [e for e in model.emissions if e.seat == seat and e.at >= model.dealt_at]
    if last_swap is not None:
        after = [e for e in shown if last_swap <= e.at <= last_swap + window]
        if after:
            lr *= EMIT_AFTER_SWAP_LR
        since = [e.emoji for e in shown if e.at >= last_swap]
        if len(since) >= 2 and len(set(since)) == 1:
            lr *= REPEAT_LR
    return lr


def team_carre_chance(model: Model, team: int) -> float:
    """P(either player of `team` holds a carré now)."""
    miss = 1.0
    for seat in model.team_seats(team):
        if seat == model.seat:
            continue
        miss *= 1.0 - seat_carre_chance(model, seat)
    return 1.0 - miss
