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

It decides too when a call can only lose, so that the client asks for a second tap before
sending it (a slip of the thumb would give a point away; the right call always goes on one tap):

    quatro_needs_confirm   the partner's floor shows nothing (no floor, or no emoji on it yet):
                           nothing the player sees says the partner holds a carré (R15). A carré
                           of the player's own leaves this to R16's reminder, which asks anyway.
    contre_needs_confirm   no player of the accused team has taken two cards of one rank from the
                           centre (net of those put back) since their hands were dealt. No hand is
                           dealt three of a rank (R4), so without that a carré is impossible and
                           the Contre! gives the accused team a point (R17). Every swap is public
                           (R9): the view's `net_taken` is that record, the same for every seat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.seating import partner, team_seats

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


def partner_floor_shows(view: Mapping[str, Any], seat: int) -> bool:
    """Whether the partner of `seat` holds the floor with an emoji on it (the sign or not)."""
    seats = view["seats"]
    other = seats[partner(seat, len(seats))]
    return bool(other.get("floor")) and other.get("emoji") is not None


def carre_possible(view: Mapping[str, Any], team: int) -> bool:
    """Whether the swaps the table saw leave `team` a way to hold a carré: one of its players
    holds, net, two or more cards of one rank taken from the centre since the deal (R4)."""
    seats = view["seats"]
    net = view.get("net_taken") or [{} for _ in seats]
    return any(count >= 2 for s in team_seats(team, len(seats)) for count in net[s].values())


def quatro_needs_confirm(view: Mapping[str, Any], seat: int) -> bool:
    """Whether a Quatro! of `seat` now should take a second tap: in play, no carré in its own
    hand (R16's reminder asks then), and the partner's floor shows nothing."""
    return (
        view.get("phase") == "playing"
        and not holds_carre(view.get("hand") or [])
        and not partner_floor_shows(view, seat)
    )


def contre_needs_confirm(view: Mapping[str, Any], team: int) -> bool:
    """Whether a Contre! against `team` now should take a second tap: in play, and nothing
    public says that team can hold a carré, so the call can only lose (R17)."""
    return view.get("phase") == "playing" and not carre_possible(view, team)
