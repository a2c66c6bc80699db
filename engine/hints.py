"""Hints for newcomers (the `hints` table setting): the one line a player's screen may offer,
worked out from that player's own view alone — `table.view(seat)`, the `welcome.table`
snapshot kept up to date by events. Their own hand, their own team's sign, their own floor and
choice, and the public seat rows (who holds a floor, what each last emitted): nothing hidden
can reach a hint, because nothing hidden is in the view (R30).

The web client computes the same line from its state (`gateway/static/js/hints.js`, which
follows this module); the names below are its catalog keys under `hint.`.

    carre_floor   you hold a carré and no floor: take the floor, show your sign
    carre_sign    you hold a carré and the floor, but do not show the sign yet: pick it
    carre_wait    your floor shows the sign: your partner must call Quatro!, not you (R15, R16)
    partner_sign  your partner's floor shows your sign: call Quatro!
    tip_sign      round 1, signing: what the sign is for
    tip_play      round 1, playing: how to swap, and what to collect
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.seating import partner

HINTS = ("carre_floor", "carre_sign", "carre_wait", "partner_sign", "tip_sign", "tip_play")


def holds_carre(hand: Sequence[Mapping[str, Any]]) -> bool:
    return len(hand) == 4 and all(card["rank"] == hand[0]["rank"] for card in hand)


def hint_for(view: Mapping[str, Any], seat: int) -> str | None:
    """The hint `seat` may be shown now, from its own view; None when there is nothing to say
    or the host turned hints off. The most urgent hint wins: a carré first."""
    settings = view.get("settings") or {}
    if not settings.get("hints", True):
        return None
    phase = view.get("phase")
    first = view.get("round") == 1
    if phase == "signing":
        return "tip_sign" if first else None
    if phase != "playing":
        return None
    seats = view["seats"]
    mine = seats[seat]
    sign = view.get("sign")
    if holds_carre(view.get("hand") or []) and sign is not None:
        if not mine.get("floor"):
            return "carre_floor"
        return "carre_wait" if view.get("choice") == sign else "carre_sign"
    other = seats[partner(seat, len(seats))]
    if sign is not None and other.get("floor") and other.get("emoji") == sign:
        return "partner_sign"
    return "tip_play" if first else None
