"""Hints for newcomers (the `hints` table setting): the one line a player's screen may offer,
worked out from that player's own view alone — `table.view(seat)`, the `welcome.table`
snapshot kept up to date by events. Their own hand, their own team's sign, their own floor and
choice, and the public seat rows (who holds a floor, what each last emitted): nothing hidden
can reach a hint, because nothing hidden is in the view (R30).

The web client computes the same line from its state (`gateway/static/js/hints.js`, which
follows this module); the names below are its catalog keys under `hint.`, in the order they
are tried (the first that applies wins):

    partner_sign  your partner's floor shows your sign: call Quatro!
    carre_floor   you hold a carré and no floor: take the floor, show your sign
    carre_sign    you hold a carré and the floor, but do not show the sign yet: pick it
    carre_wait    your floor shows the sign: your partner must call Quatro!, not you (R15)
    tip_sign      round 1, signing: what the sign is for
    tip_play      round 1, playing: how to swap, and what to collect

Why the partner's sign comes first: Quatro! judges the caller's partner's hand and never the
caller's (R15), so what the player holds has no bearing on whether the call is right. When the
partner shows the sign, calling now is the one move that scores, whatever the player's own hand
holds — a carré included: when both partners hold one and both show the sign, each is told to
call, and whichever calls first scores (R18). Waiting would only give the other teams time for a
Contre!. A carré of one's own comes next: it is worth a point only once the partner calls on
it, so the hint leads to showing the sign, then to waiting.

The same module decides when the client asks before a costly signal (`sign_needs_confirm`):
showing the team's own sign tells the partner "call Quatro! now" (R13, R15), so showing it
without a carré hands the other teams a point. Like R16's reminder, that question is asked
whether or not hints are on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.seating import partner

HINTS = ("partner_sign", "carre_floor", "carre_sign", "carre_wait", "tip_sign", "tip_play")


def holds_carre(hand: Sequence[Mapping[str, Any]]) -> bool:
    return len(hand) == 4 and all(card["rank"] == hand[0]["rank"] for card in hand)


def partner_shows_sign(view: Mapping[str, Any], seat: int) -> bool:
    """Whether the partner of `seat` holds the floor and last emitted the team's sign: the
    signal that the partner holds a carré, so that Quatro! is right (R15)."""
    sign = view.get("sign")
    if sign is None or view.get("phase") != "playing":
        return False
    seats = view["seats"]
    other = seats[partner(seat, len(seats))]
    return bool(other.get("floor")) and other.get("emoji") == sign


def hint_for(view: Mapping[str, Any], seat: int) -> str | None:
    """The hint `seat` may be shown now, from its own view; None when there is nothing to say
    or the host turned hints off. The first of HINTS that applies wins (see above)."""
    settings = view.get("settings") or {}
    if not settings.get("hints", True):
        return None
    phase = view.get("phase")
    first = view.get("round") == 1
    if phase == "signing":
        return "tip_sign" if first else None
    if phase != "playing":
        return None
    if partner_shows_sign(view, seat):
        return "partner_sign"
    sign = view.get("sign")
    if holds_carre(view.get("hand") or []) and sign is not None:
        if not view["seats"][seat].get("floor"):
            return "carre_floor"
        return "carre_wait" if view.get("choice") == sign else "carre_sign"
    return "tip_play" if first else None


def sign_needs_confirm(view: Mapping[str, Any], emoji: str, confirmed_round: int | None) -> bool:
    """Whether showing `emoji` on the player's floor should be confirmed first: it is the
    team's own sign, the player's hand holds no carré, the floor does not show the sign
    already, and the player has not confirmed it yet this round (`confirmed_round`, kept by
    the client, is the round in which they last did). Decoys never ask."""
    sign = view.get("sign")
    return (
        view.get("phase") == "playing"
        and sign is not None
        and emoji == sign
        and view.get("choice") != sign
        and not holds_carre(view.get("hand") or [])
        and view.get("round") != confirmed_round
    )
