"""The ratings of one table size as issue 46's rule makes them, worked out again from the matches
applied (actors/rating_fix.py reads them from Redis and writes what this returns). Pure: no I/O,
no clock; the engine's own `why_unrated` and `rate`.

What it is given, for one size: every applied match `rated` still remembers, in the order they
were applied (`rated-at`: 30 days of them), with what was applied (`Settled`) and its record
(`keys.match`, 180 days; None when gone), and every player's rating now. What it works out:

- **Each applied match, judged again.** Its record gives its teams, scores and seats; a seat
  keeps its player's id when that person held it from the first round, a seat scrubbed by a
  deletion keeps its change (a person, deleted since, who weighs as a new player). A match that
  does not count under the new rule (people on fewer than two teams) is unrated, with its
  reason; the others are rated again, bots at the record's level. **Records written before
  issue 46 do not name their level: their bots are taken to have played at normal**, the
  default of every table then but practice tables, whose matches were never rated; a host who
  chose relaxed or sharp for a match that counts is not on record, and the replay rates it as
  normal (a small error, on the few matches of people on two teams with bots among them).
- **Players whose every rated match is known** (as many applied entries name them, each with its
  record, as their rating counts): replayed from a new player's rating through the matches that
  count, in the order they were applied — how their ratings were made — so the people's
  matches count exactly as if the bots' matches had never been rated, opponents included. A
  player left with no match that counts is not rated at that size any more.
- **Players whose history is not all known** (matches applied more than 30 days before the fix,
  forgotten by `rated`; a record expired or lost): their rating cannot be made again, since a
  record keeps the displayed figures and not μ and σ. Each applied match of theirs that does not
  count and was rated by the old rule is taken back on the display: μ lowered by its change over
  the display's scale (40), σ kept, one match fewer played (and won). Their rating is then
  fixed through the replay, and others' matches against them use it. Ratings began on 2
  December 2026 (fa8c773): a store fixed before 1 January 2027 has every applied match in
  `rated`, and no player needs this.
- **Matches already judged by the new rule** (applied by this release, or put right by an
  earlier fix) are replayed like the others: the result is the same, so a second run finds
  nothing to change.
- **Issue 47's rule.** The same two opponents' matches of a day are counted again from the
  records (who played, when each ended), in the order applied, as `APPLY` counted them: the
  k-th weighs 1/k, and past five an old rule's match is taken out (`"repeated"`). Whether two
  people were seen at one address is not in any record, and cannot be judged again: a match
  that `rated` holds is taken as one of different people. What this rule leaves unrated at
  apply time (`"same_person"`, `"repeated"`) never reaches `rated`, so the replay never sees
  it, and counts it no more than `APPLY` did; its record says why it was not rated.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from actors.ratings import Settled, Standing
from engine.ratings import (
    DISPLAY_SCALE,
    NEW,
    REPEAT_WINDOW_MS,
    Facts,
    MatchResult,
    Rating,
    SeatResult,
    Unrated,
    rate,
    weight,
    why_unrated,
)
from engine.settings import DEFAULT_BOT_LEVEL

# What a record before issue 46 is taken to have had its bots play at (see above).
ASSUMED_LEVEL = DEFAULT_BOT_LEVEL
GONE = "gone:"  # the stand-in id of a person whose seat a deletion scrubbed


# How a record says its match was rated: `rated`, `reason`, and each seat's before, after and
# played, in seat order.
Said = tuple[bool | None, str | None, tuple[tuple[int | None, int | None, int | None], ...]]


@dataclass(frozen=True, slots=True)
class Line:
    """What the replay reads of a match's record, and no more (a fix holds one per applied
    match): its result, and how the record says it was rated."""

    result: MatchResult
    said: Said

    @classmethod
    def of(cls, record: dict[str, Any]) -> Line:
        seats = tuple((s.get("before"), s.get("after"), s.get("played")) for s in record["seats"])
        return cls(result_of(record), (record.get("rated"), record.get("reason"), seats))


@dataclass(frozen=True, slots=True)
class Applied:
    """One entry of `rated`: the match's id, what was applied, and its record's line (None:
    the record is gone)."""

    mid: str
    settled: Settled
    line: Line | None


@dataclass(slots=True)
class Replayed:
    """What the size's keys should hold where they say otherwise: each player's standing (None:
    not rated any more), the JSON `rated` should hold of a match, what a record should say of
    how its match was rated (`patch_json` makes the patch). `kept`: the players whose history
    is not all known. Only the differences are held: a fix holds them all at once."""

    standings: dict[str, Standing | None] = field(default_factory=dict)
    entries: dict[str, str] = field(default_factory=dict)
    patches: dict[str, Said] = field(default_factory=dict)
    kept: set[str] = field(default_factory=set)
    unrated: int = 0  # matches that no longer count


def result_of(record: dict[str, Any]) -> MatchResult:
    """A match's result as its record keeps it (names left out: nothing here reads them)."""
    seats = []
    for s in record["seats"]:
        player = s.get("player")
        if player is None and s.get("after") is not None:
            player = f"{GONE}{record['match']}:{s['seat']}"
        seats.append(SeatResult(int(s["seat"]), int(s["team"]), player, ""))
    return MatchResult(
        match=int(record.get("number", 1)),
        players=int(record["players"]),
        scores=tuple(int(x) for x in record["scores"]),
        seats=tuple(seats),
        bot_level=str(record.get("bot_level") or ASSUMED_LEVEL),
        practice=False,  # a practice table's matches never reached `rated`
        ended_at=int(record.get("ended_at", 0)),
    )


def replay(applied: list[Applied], now: dict[str, Standing]) -> Replayed:
    """The size's ratings, entries and records under issue 46's rule (see the module's
    docstring). `applied` in the order the matches were applied; `now`: every rated player's
    standing as read (its version is kept: the writer checks it)."""
    out = Replayed()
    named: Counter[str] = Counter()
    lost: set[str] = set()
    for a in applied:
        named.update(list(a.settled.changes))
        if a.line is None:
            lost.update(a.settled.changes)
    known = {p for p, s in now.items() if named[p] == s.played and p not in lost}
    out.kept = set(now) - known
    ratings: dict[str, Rating] = {p: NEW for p in known}
    played: Counter[str] = Counter()
    won: Counter[str] = Counter()
    judged = judge(applied)
    fixed = {p: _taken_back(p, now[p], applied, judged) for p in out.kept}
    for a in applied:
        if a.line is None:
            continue
        result = a.line.result
        reason, share = judged[a.mid]
        if reason is not None:
            entry = Settled({}, reason)
            out.unrated += 1
        else:
            entry = _rated(a, result, share, ratings, fixed, known, played, won)
        if entry != a.settled:
            out.entries[a.mid] = entry.to_json()
        said = _said(a.line, entry)
        if said != a.line.said:
            out.patches[a.mid] = said
    for p, s in now.items():
        if p in fixed:
            out.standings[p] = fixed[p]
        elif played[p] == 0:
            out.standings[p] = None
        else:
            out.standings[p] = Standing(ratings[p], played[p], won[p], s.version)
    return out


def judge(applied: list[Applied]) -> dict[str, tuple[Unrated | None, float]]:
    """Each applied match with a record, judged by the rule in the order applied: why it does
    not count, or the weight it counts with. The opponents' counts of the day are made again
    from the matches that count before it (issue 47), as `APPLY` kept them; whether two
    people were seen at one address is not on record, and taken as not."""
    met: dict[tuple[str, str], list[int]] = defaultdict(list)
    out: dict[str, tuple[Unrated | None, float]] = {}
    for a in applied:
        if a.line is None:
            continue
        result = a.line.result
        start = result.ended_at - REPEAT_WINDOW_MS
        pairs = result.opponents()
        facts = Facts(met=max((sum(t >= start for t in met[p]) for p in pairs), default=0))
        reason = why_unrated(result, facts)
        out[a.mid] = (reason, weight(facts))
        if reason is None:
            for pair in pairs:
                met[pair].append(result.ended_at)
    return out


def _rated(
    a: Applied,
    result: MatchResult,
    share: float,
    ratings: dict[str, Rating],
    fixed: dict[str, Standing],
    known: set[str],
    played: Counter[str],
    won: Counter[str],
) -> Settled:
    """A match that counts, rated again: the known players move, the others weigh as they
    stand (a player not known, a deleted one as replayed so far, a scrubbed seat as new)."""
    before: dict[str, Rating] = {}
    for p in result.rated():
        if p in fixed:
            before[p] = fixed[p].rating
        else:
            before[p] = ratings.get(p, NEW)
    after = rate(result, before, share)
    changes: dict[str, dict[str, int]] = {}
    for p in result.rated():
        if p in fixed:
            kept = a.settled.changes.get(p)
            if kept is not None:
                changes[p] = {k: int(v) for k, v in kept.items() if k in ("before", "after")}
            continue
        if p.startswith(GONE):
            continue
        ratings[p] = after[p]  # a deleted player too: their opponents' next matches read it
        if p not in known:
            continue
        played[p] += 1
        won[p] += 1 if result.won(p) else 0
        changes[p] = {
            "before": before[p].display,
            "after": after[p].display,
            "played": played[p],
        }
    return Settled(changes, weight=share)


def _taken_back(
    player: str,
    s: Standing,
    applied: list[Applied],
    judged: dict[str, tuple[Unrated | None, float]],
) -> Standing:
    """A player whose history is not all known: each applied match of theirs that no longer
    counts and was rated by the old rule, taken back on the display (μ, played, won)."""
    mu, played, won = s.rating.mu, s.played, s.won
    for a in applied:
        change = a.settled.changes.get(player)
        if a.line is None or change is None or a.settled.rule != 0:
            continue
        result = a.line.result
        if judged[a.mid][0] is None:
            continue
        mu -= (int(change["after"]) - int(change["before"])) / DISPLAY_SCALE
        played -= 1
        won -= 1 if result.won(player) else 0
    if (mu, played) == (s.rating.mu, s.played):
        return s
    return Standing(Rating(mu, s.rating.sigma), max(0, played), max(0, won), s.version)


def _said(line: Line, settled: Settled) -> Said:
    """What a record should say of how its match was rated, as `settled` says it."""
    said = []
    for seat, (before, after, _) in zip(line.result.seats, line.said[2], strict=True):
        player = seat.player_id
        change = settled.changes.get(player) if player is not None else None
        if change is not None:
            said.append((change.get("before"), change.get("after"), change.get("played")))
        elif player is not None and player.startswith(GONE) and settled.rated:
            said.append((before, after, None))  # a deleted player's, kept as it was
        else:
            said.append((None, None, None))
    return (settled.rated, settled.reason, tuple(said))


def patch_json(said: Said) -> str:
    """A record's patch (actors/rating_fix_scripts.py, PATCH) from what it should say."""
    rated, reason, seats = said
    return json.dumps(
        {
            "rated": rated,
            "reason": reason,
            "seats": [{"before": b, "after": a, "played": p} for b, a, p in seats],
        }
    )
