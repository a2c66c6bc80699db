"""The guided practice round (issue 46): its script, as data. Three short lessons, each one round
of a 4-seat practice table with a fixed deal, played by one learner in seat 0 against bots that
follow this script and wait for them (engine.bots.scripted):

1. The learner collects a carré (two swaps: the two aces they lack lie in the centre), takes the
   floor and shows the team's sign; the partner, who never sees the learner's hand, reads the
   sign and calls Quatro! on it. The holder never calls: the partner calls on their hand (R15).
2. The partner collects a carré and shows the sign: the learner calls Quatro!.
3. An opponent collects a carré and keeps showing the same emoji: the learner calls Contre!
   against that team and wins the point (R17).

What the learner is told at each moment, what they may not do, and how the tutorial ends are
engine.coach's; which seat plays which part is `role`. Every rule of R1-R30 holds as in any
game but the clocks: a tutorial's signing, round and pause have none (docs/rules.md, "The
guided round"), so a newcomer who reads slowly never loses a round to the clock. This module
imports nothing of the engine's state, so the configuration can read its deals.
"""

from __future__ import annotations

from enum import StrEnum

LEARNER = 0
PARTNER = 2  # opposite the learner (R1)
OPPONENT = 1  # the opponent who collects in lesson 3; seat 3 stays idle

# (hands by seat, centre), in ranks; each uses the 4-seat deck once and obeys R4.
Deal = tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]
DEALS: tuple[Deal, ...] = (
    # 1: the learner holds two aces, the centre the two others.
    (
        (("A", "A", "K", "Q"), ("K", "Q", "J", "10"), ("K", "Q", "J", "10"), ("K", "Q", "J", "10")),
        ("A", "A", "J", "10"),
    ),
    # 2: the partner holds two kings, the centre the two others; the learner has no pair.
    (
        (("A", "Q", "J", "10"), ("A", "Q", "J", "10"), ("K", "K", "Q", "J"), ("A", "Q", "J", "10")),
        ("K", "K", "A", "10"),
    ),
    # 3: the opponent in seat 1 holds two queens, the centre the two others.
    (
        (("A", "K", "J", "10"), ("Q", "Q", "A", "K"), ("A", "K", "J", "10"), ("A", "K", "J", "10")),
        ("Q", "Q", "J", "10"),
    ),
)
LESSONS = len(DEALS)

# The opponents' sign in lesson 3, chosen as signing begins: the learner never sees it but
# through that seat's floor, as in any game (R5, R30).
OPPONENT_SIGN = "\U0001f438"  # frog
# The learner's team's sign in lesson 3, which the partner picks first as signing begins (the
# first partner to pick fixes it, R5; engine.rounds.begin_signing): never the opponents' frog,
# so that the emoji the learner is asked to read on the other team's floor is never their own.
PARTNER_SIGN = "\U0001f989"  # owl


class Role(StrEnum):
    CALLER = "caller"  # calls Quatro! once the learner's floor shows the team's sign
    COLLECTOR = "collector"  # collects a carré from the centre, then shows the team's sign


_ROLES: dict[tuple[int, int], Role] = {
    (1, PARTNER): Role.CALLER,
    (2, PARTNER): Role.COLLECTOR,
    (3, OPPONENT): Role.COLLECTOR,
}


def role(lesson: int, seat: int) -> Role | None:
    """What `seat` does in `lesson` (a round number); None: it stays seated and still."""
    return _ROLES.get((lesson, seat))


# The bots' pace, in ms at speed 1 (a test time_scale s runs them at 1/s): slow enough to read
# the instruction each move answers before the next one comes.
READ_MS = 4_000  # from the round's opening to a collector's first move
MOVE_GAP_MS = 1_500  # between a collector's moves, once its cooldown has passed
CALL_MS = 5_000  # from the learner's sign on the floor to the partner's Quatro! (lesson 1)
