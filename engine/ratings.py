"""Ratings from matches (an extension, not in the rule book): OpenSkill's Plackett–Luce model
(Weng and Lin's Bayesian approximation, made for teams and for games of more than two sides)
over a match's teams and their final scores.

    result = table.result()                 # engine.table: the match's teams, once it is over
    facts = Facts(together, met)            # what the store knows of its people (below)
    if why_unrated(result, facts) is None:  # counts(result, facts), said with its reason
        after = rate(result, before, weight(facts))  # before: player id -> Rating

Pure: no clock, no randomness, no I/O. The table actor applies what `rate` says, once per
match (actors/ratings.py); quick play reads `level` to seat players of near ratings together.

- **Teams and scores.** Every team of the match is one side; the final scores rank them, a
  higher score better, and equal scores are a tie, so teams that win together (R28) share the
  win, as do the teams behind them with the same score.
- **Bots** play at fixed ratings, one per level (`BOT_RATINGS`): they weigh on the humans'
  expected results, and are never updated.
- **Who is rated.** The humans who held their seat from the match's first round to its end. A
  seat taken from a bot during the match (engine.latejoin) is played by its bot's rating on the
  team's behalf, and its newcomer is not rated: joining a match at 4–0 must not earn a win.
- **What counts** (issue 46; `why_unrated`, the one place that says it): a match is rated only
  when at least two of its teams each have a human who held the seat from its first round, so
  that a rating is earned against people. A match of one person (their partner a bot too), or
  of two partners, against bots alone changes nothing: a leaderboard ranks people who played
  people, as lichess's and chess.com's do, which rate no game against the computer. In a match
  that counts, the bots on any team still weigh at their level's fixed rating. A practice table
  (`TableConfig.practice`) never counts. Each reason has a name the reveal and the match's
  record carry (`UNRATED`).
- **One person cannot rate themselves** (issue 47). What the match alone does not say, the
  store tells as `Facts`: which of its rated people were seen at one address (the table actor
  reads it, actors/rating_facts.py), and how many counted matches the same two people played
  against each other in the day before this one. Two rated people seen at one address make the
  match rate nobody (`"same_person"`): one person with two profiles, one of them losing on
  purpose or both playing one team with the sign known, looks exactly like that — and so do two
  people of one household, which the rule cannot tell apart and leaves unrated too. The k-th
  counted match between the same two opponents within `REPEAT_WINDOW_MS` weighs 1/k
  (`weight`: μ and σ² move by that share of what a first match would move them), and past
  `REPEATS_COUNTED` it does not count at all (`"repeated"`): a pair cannot pump a rating
  by playing each other all day.
- **Provisional** (`provisional`): a rating is provisional until its player has played
  `ESTABLISHED_AFTER` rated matches at that table size, and only established players are listed
  on a leaderboard, as lichess keeps players of a provisional rating off its own. Ten: by then
  the model has taken a quarter off a newcomer's uncertainty (σ 8.33 → 6.35 when the results
  are a coin toss) and a match moves the displayed rating by 76 points on average, against 105
  in the first (`python -m lab.rating_settle` prints both, match by match). The figure shown,
  μ − 3σ, already holds an uncertain rating low, so the threshold need not wait for σ to
  settle (it takes some 25 matches to halve the swing): an evening's play lists a newcomer.
- **The figure players see** is `Rating.display`: 1000 + 40 × (μ − 3σ), the conservative
  estimate OpenSkill calls the ordinal, so a new player starts at 1000 and climbs as the model
  grows sure of them. Leaderboards rank by it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from openskill.models import PlackettLuce

from engine.settings import BOT_LEVELS

MU = 25.0
SIGMA = MU / 3
DISPLAY_BASE = 1000.0
DISPLAY_SCALE = 40.0
# A rating's sigma never falls below this: a veteran's rating still moves after a surprise.
SIGMA_FLOOR = 0.8
# Rated matches at a table size before a rating is established (shown without its "?", listed).
ESTABLISHED_AFTER = 10

_MODEL = PlackettLuce(mu=MU, sigma=SIGMA)


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA

    @property
    def ordinal(self) -> float:
        """The conservative estimate: the model is 99.7% sure the skill is above it."""
        return self.mu - 3 * self.sigma

    @property
    def display(self) -> int:
        """What players see and leaderboards rank by."""
        return round(DISPLAY_BASE + DISPLAY_SCALE * self.ordinal)

    @property
    def level(self) -> int:
        """The estimated skill itself on the display's scale (quick play seats by it): a new
        player is 1000, like their display, but a veteran's level does not lag behind."""
        return round(DISPLAY_BASE + DISPLAY_SCALE * (self.mu - MU))


NEW = Rating()

# Bots' fixed ratings, one per table level (engine.bots.levels): a relaxed bot is beaten by a
# newcomer who has learnt the rules, a sharp one by few. Their small sigma says the model is sure
# of them, so a match against bots moves a human's rating by what the human did.
BOT_RATINGS: dict[str, Rating] = {
    "relaxed": Rating(18.0, 1.0),
    "normal": Rating(25.0, 1.0),
    "sharp": Rating(31.0, 1.0),
}
assert tuple(BOT_RATINGS) == BOT_LEVELS


@dataclass(frozen=True, slots=True)
class SeatResult:
    seat: int
    team: int
    player_id: str | None  # the rated human, or None: a bot, or a seat taken during the match
    name: str


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A finished match, as the rules saw it end: its number at the table (1, 2… with each
    rematch), its teams' final scores (team order), its seats, the level its bots played at,
    whether its table was a practice table, and when it ended (the table's clock, ms)."""

    match: int
    players: int
    scores: tuple[int, ...]
    seats: tuple[SeatResult, ...]
    bot_level: str
    practice: bool
    ended_at: int

    @property
    def winners(self) -> tuple[int, ...]:
        best = max(self.scores)
        return tuple(team for team, score in enumerate(self.scores) if score == best)

    def rated(self) -> tuple[str, ...]:
        """The humans this match rates when it counts (`why_unrated`): those who held their
        seat from its first round, in seat order."""
        return tuple(s.player_id for s in self.seats if s.player_id is not None)

    def teams_of_people(self) -> tuple[int, ...]:
        """The teams with at least one of those humans, in team order."""
        return tuple(sorted({s.team for s in self.seats if s.player_id is not None}))

    def won(self, player_id: str) -> bool:
        return any(s.player_id == player_id and s.team in self.winners for s in self.seats)

    def opponents(self) -> tuple[tuple[str, str], ...]:
        """Every two rated humans of different teams, each pair in id order, sorted: the
        pairs whose earlier matches against each other make this one weigh less."""
        people = [(s.player_id, s.team) for s in self.seats if s.player_id is not None]
        pairs = {
            (min(a, b), max(a, b))
            for i, (a, ta) in enumerate(people)
            for b, tb in people[i + 1 :]
            if ta != tb and a != b
        }
        return tuple(sorted(pairs))


@dataclass(frozen=True, slots=True)
class Facts:
    """What the store knows of a match's people that the match itself does not say (issue 47):
    `together`, pairs of its rated humans seen at one address; `met`, the most counted matches
    any two of its opposing humans played against each other in the `REPEAT_WINDOW_MS` before
    it ended. Nothing known: `NO_FACTS`."""

    together: frozenset[frozenset[str]] = frozenset()
    met: int = 0


NO_FACTS = Facts()

# Why a finished match changes nobody's rating: a practice table; fewer than two teams with a
# person who played it all (bots alone against them, or nobody); two of its people seen at one
# address; the same two opponents past their day's count. The store adds "profile": a player
# of the match without a profile, or one who deleted theirs (actors/ratings.py).
Unrated = Literal["practice", "bots", "same_person", "repeated", "profile"]
UNRATED: tuple[Unrated, ...] = ("practice", "bots", "same_person", "repeated", "profile")
PEOPLE_TEAMS = 2  # teams with a person of their own that a match needs to be rated
REPEAT_WINDOW_MS = 24 * 3600 * 1000  # how far back matches between the same people are counted
REPEATS_COUNTED = 5  # counted matches of the same two opponents in that window; more: none


def why_unrated(result: MatchResult, facts: Facts = NO_FACTS) -> Unrated | None:
    """Why this match changes nobody's rating, or None when it counts. The one rule: a new
    reason is a new line here, and a new name in UNRATED."""
    if result.practice:
        return "practice"
    if len(result.teams_of_people()) < PEOPLE_TEAMS:
        return "bots"
    people = set(result.rated())
    if any(len(pair) == 2 and pair <= people for pair in facts.together):
        return "same_person"
    if facts.met >= REPEATS_COUNTED:
        return "repeated"
    return None


def counts(result: MatchResult, facts: Facts = NO_FACTS) -> bool:
    """Whether this match changes anyone's rating (`why_unrated` says why not)."""
    return why_unrated(result, facts) is None


def weight(facts: Facts) -> float:
    """How much a match that counts moves ratings: 1 for the first match of its opponents
    within the window, 1/k for the k-th."""
    return 1.0 / (1 + max(0, facts.met))


def provisional(played: int) -> bool:
    """Whether a rating after `played` rated matches at its size is still provisional."""
    return played < ESTABLISHED_AFTER


def to_establish(played: int) -> int:
    """Rated matches still to play at a size before the rating is established (0: it is)."""
    return max(0, ESTABLISHED_AFTER - played)


def rate(
    result: MatchResult, before: Mapping[str, Rating], share: float = 1.0
) -> dict[str, Rating]:
    """Each rated human's rating after the match, from their ratings before it (a player
    missing from `before` is new). Bots, and seats taken during the match, play at the table's
    bot rating and are not updated. `share` (0 < share ≤ 1, `weight`): the part of the model's
    move that is kept, of μ and of σ² alike, so that a match weighing 1/2 teaches the model
    half of what it would."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"a match's weight is in (0, 1], not {share}")
    bot = BOT_RATINGS.get(result.bot_level, BOT_RATINGS["normal"])
    teams = len(result.scores)
    sides: list[list[Rating]] = [[] for _ in range(teams)]
    who: list[list[str | None]] = [[] for _ in range(teams)]
    for s in sorted(result.seats, key=lambda s: s.seat):
        rating = bot if s.player_id is None else before.get(s.player_id, NEW)
        sides[s.team].append(rating)
        who[s.team].append(s.player_id)
    model_teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma) for r in side] for side in sides]
    rated = _MODEL.rate(model_teams, scores=[float(x) for x in result.scores])
    after: dict[str, Rating] = {}
    for team, side in enumerate(rated):
        for player_id, new in zip(who[team], side, strict=True):
            if player_id is not None:
                after[player_id] = _kept(before.get(player_id, NEW), new, share)
    return after


def _kept(old: Rating, new: Any, share: float) -> Rating:
    """The model's new rating, `share` of the way from the old one (a whole match: exactly
    the model's, so that a match of weight 1 rates as it always did)."""
    mu, sigma = float(new.mu), float(new.sigma)
    if share < 1.0:
        mu = old.mu + share * (mu - old.mu)
        sigma = math.sqrt(old.sigma**2 + share * (sigma**2 - old.sigma**2))
    return Rating(mu, max(SIGMA_FLOOR, sigma))


# -- Quick play by level -----------------------------------------------------------------------
# A public table accepts a newcomer whose level is within its band of the level the table was
# opened at. The band starts narrow and widens with the time its players have waited, linearly,
# until it takes anyone at `WIDE_AT` of the table's fill wait: the last stretch before bots fill
# the empty seats is open to every level, so nobody waits longer than QUATRO_QUICK_FILL_S.
BAND_START = 100  # display points either side, at once
BAND_REACH = 1_900  # added by `WIDE_AT`: a band this wide already spans every level players have
WIDE_AT = 0.75  # of the fill wait, after which any level is taken
ANY_LEVEL = 1_000_000


def band(waited_ms: int, fill_ms: int) -> int:
    """How far (in display points, either side) a public table's level reaches after its
    players waited `waited_ms` of the `fill_ms` before bots fill it in."""
    open_at = max(1, int(fill_ms * WIDE_AT))
    if waited_ms >= open_at:
        return ANY_LEVEL
    return BAND_START + BAND_REACH * max(0, waited_ms) // open_at
