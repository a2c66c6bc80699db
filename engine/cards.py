"""Cards, the deck for each table size (R2), and the carré test.

Card ids are fixed per table size (`c0` … `c{4(n+1)-1}`), so a card keeps its id across deals and
the wire never needs to rename cards. Only the rank matters; suits are decoration.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

RANKS: tuple[str, ...] = ("A", "K", "Q", "J", "10", "9", "8", "7", "6")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
PLAYER_COUNTS: tuple[int, ...] = (4, 6, 8)


@dataclass(frozen=True, slots=True)
class Card:
    id: str
    rank: str
    suit: str

    def to_wire(self) -> dict[str, str]:
        return {"id": self.id, "rank": self.rank, "suit": self.suit}


def ranks_for(players: int) -> tuple[str, ...]:
    """The n+1 ranks in play at a table of `players` (R2)."""
    if players not in PLAYER_COUNTS:
        raise ValueError(f"Quatro is played by 4, 6 or 8 players, not {players}")
    return RANKS[: players + 1]


@cache
def deck_for(players: int) -> tuple[Card, ...]:
    """The whole deck, in a fixed order that gives every card its id."""
    return tuple(
        Card(id=f"c{i * 4 + j}", rank=rank, suit=suit)
        for i, rank in enumerate(ranks_for(players))
        for j, suit in enumerate(SUITS)
    )


@cache
def cards_by_id(players: int) -> dict[str, Card]:
    return {card.id: card for card in deck_for(players)}


def has_carre(hand: Iterable[Card]) -> bool:
    """A carré is four cards of one rank in one hand."""
    ranks = [card.rank for card in hand]
    return len(ranks) == 4 and ranks.count(ranks[0]) == 4


def too_strong(hand: Iterable[Card]) -> bool:
    """R4: a dealt hand with three or four cards of one rank must be replaced."""
    counts = Counter(card.rank for card in hand)
    return max(counts.values(), default=0) >= 3
