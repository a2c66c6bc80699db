"""Dealing (R3, R4): four cards a seat, four face up in the centre, no hand with three of a rank.

Rigged deals from the configuration are used first, in order; then the table's own RNG deals.
"""

from __future__ import annotations

from engine.cards import Card, deck_for, too_strong
from engine.config import DealSpec
from engine.state import TableState


def materialize(spec: DealSpec, players: int) -> tuple[list[list[Card]], list[Card]]:
    """Turn a deal of ranks into the table's own cards, giving out suits in deck order."""
    pools: dict[str, list[Card]] = {}
    for card in deck_for(players):
        pools.setdefault(card.rank, []).append(card)
    hands = [[pools[rank].pop(0) for rank in hand] for hand in spec.hands]
    center = [pools[rank].pop(0) for rank in spec.center]
    return hands, center


def deal(state: TableState) -> int:
    """Deal every hand and the centre; return how many deals R4 threw away."""
    n = state.players
    cfg = state.config
    if state.deals_used < len(cfg.deals):
        hands, center = materialize(cfg.deals[state.deals_used], n)
        state.deals_used += 1
        redeals = 0
    else:
        deck = list(state.deck)
        redeals = -1
        while True:
            redeals += 1
            state.rng.shuffle(deck)
            hands = [deck[i * 4 : i * 4 + 4] for i in range(n)]
            if not any(too_strong(hand) for hand in hands):
                break
        center = deck[n * 4 :]
    for seat, hand in zip(state.seats, hands, strict=True):
        seat.hand = hand
        seat.net_taken = {}
    state.center = center
    return redeals
