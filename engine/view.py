"""What one seat may see (R25, R30), built only from public state plus that seat's own hand and
its own team's sign. This is the `welcome.table` snapshot of PROTOCOL.md."""

from __future__ import annotations

from engine.events import Wire
from engine.phase import Phase
from engine.signs import EMOJIS
from engine.state import HOST_SEAT, TableState
from engine.tutorial import LEARNER


def seats_public(state: TableState, *, detail: bool) -> list[Wire]:
    out: list[Wire] = []
    for s, st in enumerate(state.seats):
        row: dict[str, Wire] = {
            "seat": s,
            "team": state.team_of(s),
            "name": st.name,
            "kind": st.kind,
            "connected": st.connected,
        }
        if detail:
            row["ready"] = st.ready
            row["floor"] = st.floor_open
            row["emoji"] = st.last_emitted
        out.append(row)
    return out


def summary(state: TableState, *, detail: bool = False) -> dict[str, Wire]:
    """The public summary of GET /api/tables/{code}; with `detail`, the seats as a view shows
    them."""
    return {
        "code": state.config.code,
        "players": state.players,
        "phase": str(state.phase),
        "round": state.round,
        "host": None if state.public else HOST_SEAT,
        # Quick play (extension): a public table has no host; in its lobby, `fills_at` is when
        # bots take the seats still empty and the match starts (None: not counting yet).
        "public": state.public,
        "fills_at": state.deadline if state.public and state.phase is Phase.LOBBY else None,
        "scores": list(state.scores),
        "seats": seats_public(state, detail=detail),
        "settings": state.settings.to_wire(),
        # (ext) Requests for bots' seats during the match; public, as every `claim` event.
        "claims": [
            {"seat": s, "name": c.name, "approved": c.approved}
            for s, c in sorted(state.claims.items())
        ],
    }


def view(state: TableState, seat: int | None) -> dict[str, Wire]:
    """The table as `seat` sees it; `seat=None` is an onlooker who sees only what is public."""
    mine = state.seats[seat] if seat is not None else None
    vote = state.vote
    out: dict[str, Wire] = {
        **summary(state, detail=True),
        "hand": [card.to_wire() for card in mine.hand] if mine else [],  # type: ignore[misc]
        "center": [card.to_wire() for card in state.center],  # type: ignore[misc]
        "sign": state.signs[state.team_of(seat)] if seat is not None else None,
        "deadline": state.deadline,
        "swap_ready_at": mine.swap_ready_at if mine else None,
        "floor_ready_at": mine.floor_ready_at if mine else None,
        "choice": mine.choice if mine else None,
        "vote": None
        if vote is None
        else {
            "by": vote.by,
            "voters": list[Wire](vote.voters),
            "deadline": vote.deadline,
            "accepted": list[Wire](sorted(vote.accepted)),
        },
        "reshuffled": state.reshuffled,
        # R20's gap is public (everyone saw the vote end), so clients and bots need not guess.
        "vote_ready_at": None
        if state.last_vote_end is None
        else state.last_vote_end + state.timings.vote_gap,
        "last_reveal": state.last_reveal.to_wire() if state.last_reveal else None,
        "winners": list(state.winners) if state.winners is not None else None,
        "emissions": [{"seat": s, "emoji": e, "at": at} for s, e, at in state.emissions],
        # Public like every swap (R9): what each seat took from the centre, net, since its hand
        # was dealt, so that a reloaded page still knows who may hold a carré (engine.hints).
        "net_taken": [dict(st.net_taken) for st in state.seats],
        "emojis": list(EMOJIS),
    }
    if state.config.tutorial and seat == LEARNER:
        # (ext) The learner's instruction now, as the last `tutorial` event said (engine.coach).
        coached = state.coached
        out["tutorial"] = None if coached is None else coached.to_wire()
    return out
