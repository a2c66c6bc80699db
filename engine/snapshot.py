"""A compact, JSON-ready image of a table's whole state, so a table actor can die and come back
with every point, hand, sign and clock as it was. Cards travel as ids; the RNG travels too, so a
restored table deals exactly as the original would have."""

from __future__ import annotations

import random
from typing import Any

from engine.cards import cards_by_id
from engine.config import DealSpec, TableConfig
from engine.events import Coached, Reveal
from engine.phase import Phase
from engine.settings import DEFAULT_BOT_LEVEL, TableSettings
from engine.state import Claim, SeatState, TableState, VoteState

VERSION = 1


def dump(state: TableState) -> dict[str, Any]:
    cfg = state.config
    version, internal, gauss = state.rng.getstate()
    return {
        "v": VERSION,
        "config": {
            "players": cfg.players,
            "seed": cfg.seed,
            "time_scale": cfg.time_scale,
            "code": cfg.code,
            "public": cfg.public,
            "fill_after_ms": cfg.fill_after_ms,
            "practice": cfg.practice,
            "bot_level": cfg.bot_level,
            "tutorial": cfg.tutorial,
            "deals": [
                {"hands": [list(h) for h in d.hands], "center": list(d.center)} for d in cfg.deals
            ],
        },
        "rng": [version, list(internal), gauss],
        "phase": str(state.phase),
        "round": state.round,
        "center": [c.id for c in state.center],
        # Copies: a snapshot must not change when the table plays on.
        "signs": list(state.signs),
        "scores": list(state.scores),
        "deadline": state.deadline,
        "vote": None
        if state.vote is None
        else {
            "by": state.vote.by,
            "voters": list(state.vote.voters),
            "deadline": state.vote.deadline,
            "accepted": sorted(state.vote.accepted),
        },
        "reshuffled": state.reshuffled,
        "last_vote_end": state.last_vote_end,
        "deals_used": state.deals_used,
        "last_reveal": state.last_reveal.to_wire() if state.last_reveal else None,
        "winners": list(state.winners) if state.winners is not None else None,
        "emissions": [list(e) for e in state.emissions],
        "match": state.match,
        "lineup": list(state.lineup),
        "ended_at": state.ended_at,
        "settings": state.settings.to_wire(),
        "coached": None if state.coached is None else state.coached.to_wire(),
        "claims": [
            {"seat": s, "player_id": c.player_id, "name": c.name, "approved": c.approved}
            for s, c in sorted(state.claims.items())
        ],
        "seats": [
            {
                "kind": st.kind,
                "player_id": st.player_id,
                "name": st.name,
                "connected": st.connected,
                "ready": st.ready,
                "hand": [c.id for c in st.hand],
                "swap_ready_at": st.swap_ready_at,
                "floor_open": st.floor_open,
                "floor_ready_at": st.floor_ready_at,
                "choice": st.choice,
                "next_emission_at": st.next_emission_at,
                "last_emission_at": st.last_emission_at,
                "last_emitted": st.last_emitted,
                "net_taken": dict(st.net_taken),
            }
            for st in state.seats
        ],
    }


def load(data: dict[str, Any]) -> TableState:
    if data.get("v") != VERSION:
        raise ValueError(f"unknown snapshot version {data.get('v')!r}")
    c = data["config"]
    config = TableConfig(
        players=c["players"],
        seed=c["seed"],
        time_scale=c["time_scale"],
        code=c["code"],
        # Snapshots saved before quick play existed are of private tables.
        public=bool(c.get("public", False)),
        fill_after_ms=int(c.get("fill_after_ms", 60_000)),
        # Snapshots saved before ratings existed: not a practice table.
        practice=bool(c.get("practice", False)),
        # Saved before a table could start at another level: the default.
        bot_level=str(c.get("bot_level", DEFAULT_BOT_LEVEL)),
        # Snapshots saved before the guided round existed: not a tutorial.
        tutorial=bool(c.get("tutorial", False)),
        deals=tuple(
            DealSpec(hands=tuple(tuple(h) for h in d["hands"]), center=tuple(d["center"]))
            for d in c["deals"]
        ),
    )
    cards = cards_by_id(config.players)
    rng = random.Random(0)  # replaced at once by the saved state; no OS entropy read
    version, internal, gauss = data["rng"]
    rng.setstate((version, tuple(internal), gauss))
    vote = data["vote"]
    reveal = data["last_reveal"]
    return TableState(
        config=config,
        rng=rng,
        seats=[
            SeatState(
                kind=s["kind"],
                player_id=s["player_id"],
                name=s["name"],
                connected=s["connected"],
                ready=s["ready"],
                hand=[cards[i] for i in s["hand"]],
                swap_ready_at=s["swap_ready_at"],
                floor_open=s["floor_open"],
                floor_ready_at=s["floor_ready_at"],
                choice=s["choice"],
                next_emission_at=s["next_emission_at"],
                last_emission_at=s["last_emission_at"],
                last_emitted=s["last_emitted"],
                # Saved before the tally was kept: nothing taken as far as the table knows
                # (a Contre! is then asked about once more than needed, never less).
                net_taken={str(r): int(k) for r, k in s.get("net_taken", {}).items()},
            )
            for s in data["seats"]
        ],
        phase=Phase(data["phase"]),
        round=data["round"],
        center=[cards[i] for i in data["center"]],
        signs=list(data["signs"]),
        scores=list(data["scores"]),
        deadline=data["deadline"],
        vote=None
        if vote is None
        else VoteState(
            by=vote["by"],
            voters=tuple(vote["voters"]),
            deadline=vote["deadline"],
            accepted=set(vote["accepted"]),
        ),
        reshuffled=data["reshuffled"],
        last_vote_end=data["last_vote_end"],
        deals_used=data["deals_used"],
        last_reveal=None
        if reveal is None
        else Reveal(
            reason=reveal["reason"],
            by=reveal["by"],
            target_team=reveal["target_team"],
            correct=reveal["correct"],
            scored=tuple(reveal["scored"]),
            scores=tuple(reveal["scores"]),
            hands=tuple(tuple(cards[c["id"]] for c in hand) for hand in reveal["hands"]),
            carres=tuple(reveal["carres"]),
            signs=tuple(reveal["signs"]),
        ),
        winners=tuple(data["winners"]) if data["winners"] is not None else None,
        # Snapshots saved before emissions were kept have none: the list starts empty.
        emissions=[(int(s), str(e), int(at)) for s, e, at in data.get("emissions", [])],
        # Snapshots saved before ratings existed: a match under way counts as the table's
        # first, and its lineup as the seats now (nobody is known to have joined late).
        match=int(data.get("match", 1 if data["round"] else 0)),
        lineup=tuple(
            data["lineup"]
            if "lineup" in data
            else [s["player_id"] for s in data["seats"]]
            if data["round"]
            else []
        ),
        ended_at=int(data.get("ended_at", 0)),
        # Snapshots saved before settings existed: the defaults.
        settings=TableSettings.from_wire(data.get("settings")),
        coached=_coached(data.get("coached")),
        # Snapshots saved before late joining existed: no request.
        claims={
            int(c["seat"]): Claim(str(c["player_id"]), str(c["name"]), bool(c["approved"]))
            for c in data.get("claims", [])
        },
    )


def _coached(raw: Any) -> Coached | None:
    """A tutorial's last instruction as saved (engine.coach); None elsewhere."""
    if raw is None:
        return None
    fields = {k: v for k, v in raw.items() if k != "type"}
    return Coached(**fields)
