"""Calls (R15–R18, R27): Quatro! judges the caller's partner's hand; Contre! accuses one team."""

from __future__ import annotations

from engine.cards import has_carre
from engine.errors import ErrorCode, Refusal
from engine.events import Outbound
from engine.phase import Phase
from engine.rounds import end_round
from engine.seating import teams
from engine.state import TableState


def quatro(state: TableState, seat: int, t: int) -> list[Outbound]:
    state.require_phase(Phase.PLAYING)
    team = state.team_of(seat)
    correct = has_carre(state.seats[state.partner(seat)].hand)
    scored = (team,) if correct else tuple(k for k in range(teams(state.players)) if k != team)
    return end_round(state, t, "quatro", by=seat, target_team=team, correct=correct, scored=scored)


def contre(state: TableState, seat: int, accused: object, t: int) -> list[Outbound]:
    state.require_phase(Phase.PLAYING)
    own = state.team_of(seat)
    n_teams = teams(state.players)
    if accused is None and n_teams == 2:
        accused = 1 - own
    if (
        not isinstance(accused, int)
        or isinstance(accused, bool)
        or not 0 <= accused < n_teams
        or accused == own
    ):
        raise Refusal(ErrorCode.BAD_TEAM, "name one opposing team (0 to teams-1, not your own)")
    correct = any(has_carre(state.seats[s].hand) for s in state.team_seats(accused))
    scored = (own,) if correct else (accused,)
    return end_round(
        state, t, "contre", by=seat, target_team=accused, correct=correct, scored=scored
    )
