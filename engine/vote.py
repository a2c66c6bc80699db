"""The reshuffle vote (R19–R21)."""

from __future__ import annotations

from engine.dealing import deal
from engine.errors import ErrorCode, Refusal, VoteRefusal
from engine.events import ALL, WATCHERS, Audience, Outbound, Reshuffled, VoteCast, VoteStarted
from engine.phase import Phase
from engine.rounds import close_vote
from engine.state import TableState, VoteState


def request(state: TableState, seat: int, t: int) -> list[Outbound]:
    state.require_phase(Phase.PLAYING)
    if state.vote is not None:
        raise Refusal(
            ErrorCode.VOTE_REFUSED, "a vote is already running", reason=VoteRefusal.VOTE_RUNNING
        )
    if state.reshuffled:
        raise Refusal(
            ErrorCode.VOTE_REFUSED,
            "this round was reshuffled already",
            reason=VoteRefusal.ALREADY_RESHUFFLED,
        )
    if state.last_vote_end is not None and t < state.last_vote_end + state.timings.vote_gap:
        wait = state.last_vote_end + state.timings.vote_gap - t
        raise Refusal(
            ErrorCode.VOTE_REFUSED,
            f"the last vote ended too recently; wait {wait} ms",
            reason=VoteRefusal.TOO_SOON,
            retry_in=wait,
        )
    voters = tuple(s for s in state.connected_humans() if s != seat)
    deadline = t + state.timings.vote
    state.vote = VoteState(by=seat, voters=voters, deadline=deadline)
    events = [Outbound(ALL, VoteStarted(by=seat, voters=voters, deadline=deadline), t)]
    if not voters:
        events += _pass(state, t)
    return events


def cast(state: TableState, seat: int, accept: object, t: int) -> list[Outbound]:
    vote = state.vote
    if state.phase is not Phase.PLAYING or vote is None:
        raise Refusal(ErrorCode.WRONG_PHASE, "no vote is running")
    if not isinstance(accept, bool):
        raise Refusal(ErrorCode.BAD_MESSAGE, "`accept` is true or false")
    if seat not in vote.voters or seat in vote.accepted:
        raise Refusal(ErrorCode.NOT_VOTER, "you are not a voter in this vote, or you answered")
    events = [Outbound(ALL, VoteCast(seat=seat, accept=accept), t)]
    if not accept:
        return events + close_vote(state, t, passed=False)
    vote.accepted.add(seat)
    if len(vote.accepted) == len(vote.voters):
        events += _pass(state, t)
    return events


def expire(state: TableState, t: int) -> list[Outbound]:
    """Silence is refusal (R19)."""
    return close_vote(state, t, passed=False)


def voter_left(state: TableState, seat: int, t: int) -> list[Outbound]:
    """A voter who disconnects before answering has refused (R19)."""
    vote = state.vote
    if vote is None or seat not in vote.voters or seat in vote.accepted:
        return []
    return [Outbound(ALL, VoteCast(seat=seat, accept=False), t), *close_vote(state, t, False)]


def _pass(state: TableState, t: int) -> list[Outbound]:
    """R21: a fresh deal; same teams, signs, clock, cooldowns and floors; no points."""
    events = close_vote(state, t, passed=True)
    state.reshuffled = True
    redeals = deal(state)
    center = tuple(state.center)
    events += [
        Outbound(
            Audience.seat(s), Reshuffled(hand=tuple(st.hand), center=center, redeals=redeals), t
        )
        for s, st in enumerate(state.seats)
    ]
    events.append(Outbound(WATCHERS, Reshuffled(hand=(), center=center, redeals=redeals), t))
    return events
