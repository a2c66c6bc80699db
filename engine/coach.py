"""The guided round's coach (engine.tutorial): one instruction at a time for the learner, the
moves a lesson does not take, and the learner's way out.

    step_for(view)          the instruction the learner's own view calls for now
    update(state, t)        tells the learner (a `tutorial` event) when it changed
    check(state, command)   Refusal for a move the lesson does not take
    end(state, seat, t)     the learner leaves: the match is over, nobody won

The steps, in the order a lesson meets them (the web client's catalog keys `tutorial.<step>`):

    sign          lesson 1, signing: pick the team's secret sign
    sign_again    lesson 2, signing: a new round, a new sign (R7)
    ready         the sign fixed: say ready, and the cards are dealt
    ready_partner lesson 3, signing: the partner picked the sign first this time (R5); ready
    swap          lesson 1: swap the marked card of your hand for the marked card of the centre
    swap_more     lesson 1, three of a rank: one more swap, once the cooldown is over (R10)
    floor         lesson 1, a carré in hand: take the floor
    show          lesson 1, the floor taken: show the team's sign on it (R13)
    wait          lesson 1, the sign shown: the holder does not call, the partner does (R15)
    watch_partner lesson 2: the partner collects; watch their floor
    call_quatro   lesson 2, the partner shows the team's sign: call Quatro!
    watch_others  lesson 3: watch the other team's floors
    seen_once     lesson 3, an opponent shows an emoji: once may be a decoy, watch
    call_contre   lesson 3, the same emoji again from that floor: call Contre! (R17)
    done1, done2  the pause after a lesson that went as the script means: on to the next
    missed        the pause after one that went otherwise (the team's sign shown without a
                  carré, so the partner's call was wrong)
    finished      the last lesson over: the tutorial is done
    left          the learner left it (`end`)

Each step is worked out from the learner's own view (`table.view(LEARNER)`) and nothing else, so
no instruction can say what that seat does not see (R30): its card is one of the learner's own,
its slot a centre slot, its emoji the learner's team's sign or one a floor showed everyone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.commands import CallContre, CallQuatro, Command, Rematch, RequestVote, Swap
from engine.errors import ErrorCode, Refusal
from engine.events import ALL, Audience, Coached, MatchOver, Outbound
from engine.phase import Phase
from engine.seating import partner
from engine.state import TableState
from engine.tutorial import LEARNER, LESSONS, PARTNER
from engine.view import view

Wire = Mapping[str, Any]
Step = Callable[..., Coached]  # a step's name and what it points at -> the event
OPPONENTS = (1, 3)
# Contre! is asked for once an opponent's floor has shown the same emoji this many times.
SEEN_ENOUGH = 2


def step_for(v: Wire) -> Coached:
    """The instruction for the learner's view `v` (a tutorial table's `view(LEARNER)`)."""
    lesson = int(v["round"])
    phase = v["phase"]

    def coached(step: str, **at: Any) -> Coached:
        return Coached(lesson=lesson, lessons=LESSONS, step=step, **at)

    if phase == "signing" or phase == "lobby":
        if v.get("sign") is None:
            return coached("sign" if lesson <= 1 else "sign_again")
        if lesson == LESSONS:
            return coached("ready_partner", seat=PARTNER, emoji=v["sign"])
        return coached("ready", emoji=v["sign"])
    if phase == "pause":
        return coached(_after(v, lesson))
    if phase == "over":
        return coached("finished" if v.get("winners") else "left")
    if lesson == 1:
        return _collecting(v, coached)
    if lesson == 2:
        mate = v["seats"][PARTNER]
        if mate.get("floor") and v.get("sign") is not None and mate.get("emoji") == v["sign"]:
            return coached("call_quatro", seat=PARTNER, emoji=v["sign"])
        return coached("watch_partner", seat=PARTNER)
    return _watching(v, coached)


def _collecting(v: Wire, coached: Step) -> Coached:
    """Lesson 1: a carré made from the centre, the floor, the sign, then waiting."""
    hand: Sequence[Wire] = v.get("hand") or []
    sign = v.get("sign")
    if _carre(hand):
        if not v["seats"][LEARNER].get("floor"):
            return coached("floor")
        if v.get("choice") != sign:
            return coached("show", emoji=sign)
        return coached("wait", seat=partner(LEARNER, len(v["seats"])))
    center: Sequence[Wire] = v.get("center") or []
    held = Counter(card["rank"] for card in hand)
    offered = Counter(card["rank"] for card in center)
    # A rank whose four cards are all in the hand and the centre, the one the hand holds most
    # of (the hand's order, then the centre's, breaks ties); else any the centre offers.
    ranks = [*held, *(r for r in offered if r not in held)]
    whole = [r for r in ranks if held[r] + offered[r] == 4 and offered[r]]
    wanted = max(whole or [r for r in ranks if offered[r]], key=lambda r: held[r], default=None)
    if wanted is None:
        return coached("swap")
    card = next(c["id"] for c in hand if c["rank"] != wanted)
    slot = next(i for i, c in enumerate(center) if c["rank"] == wanted)
    step = "swap_more" if held[wanted] >= 3 else "swap"
    return coached(step, card=card, slot=slot)


def _watching(v: Wire, coached: Step) -> Coached:
    """Lesson 3: an opponent's floor showing one emoji again and again is a team's sign."""
    shown = v.get("emissions") or []
    for seat in OPPONENTS:
        row = v["seats"][seat]
        emoji = row.get("emoji")
        if not row.get("floor") or emoji is None:
            continue
        times = sum(1 for e in shown if e["seat"] == seat and e["emoji"] == emoji)
        step = "call_contre" if times >= SEEN_ENOUGH else "seen_once"
        return coached(step, seat=seat, emoji=emoji)
    return coached("watch_others")


def _after(v: Wire, lesson: int) -> str:
    """The pause: did the lesson end as its script means?"""
    r = v.get("last_reveal") or {}
    by = PARTNER if lesson == 1 else LEARNER
    if r.get("reason") == "quatro" and r.get("by") == by and r.get("correct"):
        return f"done{lesson}"
    return "missed"


def _carre(hand: Sequence[Wire]) -> bool:
    return len(hand) == 4 and all(card["rank"] == hand[0]["rank"] for card in hand)


def update(state: TableState, t: int) -> list[Outbound]:
    """A `tutorial` event to the learner when their instruction changed (none otherwise)."""
    step = step_for(view(state, LEARNER))
    if step == state.coached:
        return []
    state.coached = step
    return [Outbound(Audience.seat(LEARNER), step, t)]


def check(state: TableState, command: Command) -> None:
    """Refusal for what a lesson does not take; anything else goes on to the rules. A rematch
    (`not_allowed`: a tutorial is played once); and while a round is played, the learner's
    reshuffle vote (the deals are the script's), swaps after lesson 1 (the lesson is the
    others' carré: the learner watches), and a call the current step does not ask for —
    `tutorial_step` for those. Malformed commands are left to the rules, which say so."""
    if isinstance(command, Rematch):
        raise Refusal(ErrorCode.NOT_ALLOWED, "a tutorial is played once; start another")
    if command.seat != LEARNER or state.phase is not Phase.PLAYING:
        return
    step = state.coached.step if state.coached is not None else ""
    if isinstance(command, RequestVote):
        raise Refusal(ErrorCode.TUTORIAL_STEP, "the guided round's deals are set: no reshuffle")
    if isinstance(command, Swap) and state.round != 1 and _well_formed(command):
        raise Refusal(ErrorCode.TUTORIAL_STEP, "this lesson is the others' carré: just watch")
    if isinstance(command, CallQuatro) and step != "call_quatro":
        raise Refusal(ErrorCode.TUTORIAL_STEP, "not now: follow the instruction")
    if isinstance(command, CallContre) and step != "call_contre":
        raise Refusal(ErrorCode.TUTORIAL_STEP, "not yet: follow the instruction")


def _well_formed(swap: Swap) -> bool:
    slot = swap.slot
    return (
        isinstance(swap.card, str)
        and isinstance(swap.expect, str)
        and isinstance(slot, int)
        and not isinstance(slot, bool)
    )


def end(state: TableState, seat: int, t: int) -> list[Outbound]:
    """The learner leaves the tutorial: the match is over at once, nobody won (`over` with no
    winners), and the table idles out as any finished one. Refused `not_allowed` at any other
    table or from another seat; at a tutorial already over it changes nothing."""
    if not state.config.tutorial or seat != LEARNER:
        raise Refusal(ErrorCode.NOT_ALLOWED, "only a tutorial's learner ends it so")
    if state.phase is Phase.OVER:
        return []
    state.require_phase(Phase.SIGNING, Phase.PLAYING, Phase.PAUSE)
    for st in state.seats:
        st.close_floor()
    state.vote = None
    state.phase = Phase.OVER
    state.deadline = None
    state.ended_at = t
    state.winners = ()
    return [Outbound(ALL, MatchOver(winners=(), scores=tuple(state.scores)), t)]
