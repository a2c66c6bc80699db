"""A round's life: signing (R5, R6), opening and dealing, the end of a round with its reveal and
scores (R18, R22, R26–R28), and the pause before the next (R23)."""

from __future__ import annotations

from typing import Literal

from engine.cards import has_carre
from engine.config import WINNING_SCORE
from engine.dealing import deal
from engine.errors import ErrorCode, Refusal
from engine.events import (
    ALL,
    WATCHERS,
    Audience,
    MatchOver,
    Outbound,
    PauseBegan,
    ReadySaid,
    Reveal,
    RoundOpened,
    SignFixed,
    SigningBegan,
    VoteEnded,
)
from engine.latejoin import drop_claims, seat_claims
from engine.phase import Phase
from engine.signs import EMOJI_SET, EMOJIS
from engine.state import TableState
from engine.tutorial import LESSONS, PARTNER, PARTNER_SIGN


def begin_signing(state: TableState, t: int) -> list[Outbound]:
    # Joining late: granted requests take their bot seats now, between two rounds.
    seated = seat_claims(state, t)
    if state.round == 0:  # the match's first round: who plays it from the start
        state.match += 1
        state.lineup = tuple(st.player_id for st in state.seats)
    state.round += 1
    state.phase = Phase.SIGNING
    state.deadline = state.due(t, state.timings.signing)
    state.signs = [None] * len(state.signs)
    state.center = []
    state.vote = None
    state.reshuffled = False
    state.emissions = []
    for seat in state.seats:
        seat.reset_for_round()
    events = [*seated, Outbound(ALL, SigningBegan(round=state.round, deadline=state.deadline), t)]
    # Bots are always ready (R6); say so, so every client shows the same ready marks.
    events += [
        Outbound(ALL, ReadySaid(seat=s), t) for s, st in enumerate(state.seats) if st.kind == "bot"
    ]
    if state.config.tutorial and state.round == LESSONS:
        # The guided round's last lesson (engine.tutorial): the learner's partner picks their
        # team's sign first (R5), in this very step, so that the coach's first word of the
        # lesson is already "your partner picked" and the sign never is the opponents'.
        events += fix_sign(state, PARTNER, PARTNER_SIGN, t)
    return events + open_if_all_ready(state, t)


def open_if_all_ready(state: TableState, t: int) -> list[Outbound]:
    """R6: open once every connected human is ready (at once when none is connected). A
    tutorial waits for its learner, connected or not: nothing there moves without them."""
    if state.phase is not Phase.SIGNING:
        return []
    tutorial = state.config.tutorial
    if all(st.ready for st in state.seats if st.is_human and (st.connected or tutorial)):
        return open_round(state, t)
    return []


def open_round(state: TableState, t: int) -> list[Outbound]:
    events: list[Outbound] = []
    for team, sign in enumerate(state.signs):
        if sign is None:
            drawn = state.rng.choice(EMOJIS)
            state.signs[team] = drawn
            events.append(Outbound(Audience.team(team), SignFixed(emoji=drawn, by=None), t))
    redeals = deal(state)
    state.phase = Phase.PLAYING
    state.deadline = state.due(t, state.timings.round)
    center = tuple(state.center)
    events += [
        Outbound(
            Audience.seat(s),
            RoundOpened(
                round=state.round,
                hand=tuple(seat.hand),
                center=center,
                deadline=state.deadline,
                redeals=redeals,
            ),
            t,
        )
        for s, seat in enumerate(state.seats)
    ]
    public = RoundOpened(
        round=state.round, hand=(), center=center, deadline=state.deadline, redeals=redeals
    )
    events.append(Outbound(WATCHERS, public, t))
    return events


def ready(state: TableState, seat: int, t: int) -> list[Outbound]:
    state.require_phase(Phase.SIGNING)
    st = state.seats[seat]
    if st.ready:  # saying it twice changes nothing (R6: it cannot be taken back either)
        return []
    st.ready = True
    return [Outbound(ALL, ReadySaid(seat=seat), t), *open_if_all_ready(state, t)]


def choose_sign(state: TableState, seat: int, emoji: object, t: int) -> list[Outbound]:
    state.require_phase(Phase.SIGNING)
    if not isinstance(emoji, str) or emoji not in EMOJI_SET:
        raise Refusal(ErrorCode.BAD_EMOJI, "a sign is one of the 24 emojis of /api/emojis")
    team = state.team_of(seat)
    if state.signs[team] is not None:
        raise Refusal(ErrorCode.SIGN_TAKEN, "your team's sign is already fixed for this round")
    return fix_sign(state, seat, emoji, t)


def fix_sign(state: TableState, seat: int, emoji: str, t: int) -> list[Outbound]:
    """R5: `seat`'s team signs with `emoji`, told to that team only (R30); the caller has
    checked that the sign is one of the set and the team has none yet."""
    team = state.team_of(seat)
    state.signs[team] = emoji
    return [Outbound(Audience.team(team), SignFixed(emoji=emoji, by=seat), t)]


def close_vote(state: TableState, t: int, passed: bool) -> list[Outbound]:
    state.vote = None
    state.last_vote_end = t
    return [Outbound(ALL, VoteEnded(passed=passed), t)]


def end_round(
    state: TableState,
    t: int,
    reason: Literal["quatro", "contre", "timeout"],
    by: int | None = None,
    target_team: int | None = None,
    correct: bool | None = None,
    scored: tuple[int, ...] = (),
) -> list[Outbound]:
    """R18: the first call ends the round; R22: so does the clock. Everything is revealed."""
    events = close_vote(state, t, passed=False) if state.vote is not None else []
    for team in scored:
        state.scores[team] += 1
    hands = tuple(tuple(seat.hand) for seat in state.seats)
    reveal = Reveal(
        reason=reason,
        by=by,
        target_team=target_team,
        correct=correct,
        scored=scored,
        scores=tuple(state.scores),
        hands=hands,
        carres=tuple(s for s, hand in enumerate(hands) if has_carre(hand)),
        signs=tuple(state.signs),
    )
    state.last_reveal = reveal
    for seat in state.seats:
        seat.close_floor()  # silently (R13)
    events.append(Outbound(ALL, reveal, t))
    best = max(state.scores)
    # A tutorial ends with its last lesson, whatever the score (engine.tutorial).
    if best >= WINNING_SCORE or (state.config.tutorial and state.round >= LESSONS):
        state.phase = Phase.OVER
        state.deadline = None
        state.ended_at = t
        state.winners = tuple(k for k, score in enumerate(state.scores) if score == best)
        events.append(Outbound(ALL, MatchOver(winners=state.winners, scores=reveal.scores), t))
        events += drop_claims(state, t)
    else:
        state.phase = Phase.PAUSE
        state.deadline = state.due(t, state.timings.pause)
        events.append(Outbound(ALL, PauseBegan(deadline=state.deadline), t))
    return events


def next_round(state: TableState, seat: int, t: int) -> list[Outbound]:
    state.require_phase(Phase.PAUSE)
    state.require_host(seat)
    return begin_signing(state, t)


def phase_deadline_reached(state: TableState, t: int) -> list[Outbound]:
    if state.phase is Phase.SIGNING:
        return open_round(state, t)
    if state.phase is Phase.PLAYING:
        return end_round(state, t, "timeout")
    if state.phase is Phase.PAUSE:
        return begin_signing(state, t)
    state.deadline = None
    return []
