"""Redis key names, in one place, and the Ray names of table actors they point at. Everything
Quatro keeps in Redis starts with `quatro:`.

Redis Cluster: every key of one table carries the table's code as a hash tag (`quatro:{CODE}:…`),
so its save touches one slot; every other key is used alone, or with keys of its own slot
(docs/architecture.md, "Keys", lists them all with their slots, owners, TTLs and scripts). The
names before the hash tags, which a live deployment still holds while it moves over, are
`actors/legacy_keys.py`'s."""

from __future__ import annotations

POOL = "quatro:pool"  # list of ready, unassigned table actor names
# hash gateway -> "target:until_ms": the pool size each gateway wants (actors.pool)
POOL_TARGETS = "quatro:pool:targets"
ACTOR_PREFIX = "table-"  # every table actor's Ray name starts so
CELLS = "quatro:cells"  # set of the cell names ever announced (actors.cells); each has `cell()`


def pool(cell: str = "") -> str:
    """The ready actors of one cell: a pooled name means something only to that cell's Ray
    (another cell's gateway would find no such actor and drop it). No cell: `POOL`, as before
    cells, so a live deployment's list keeps working."""
    return f"quatro:cell:{cell}:pool" if cell else POOL


def pool_targets(cell: str = "") -> str:
    """The pool targets of one cell's gateways (`POOL_TARGETS` with no cell)."""
    return f"quatro:cell:{cell}:pool:targets" if cell else POOL_TARGETS


def pool_floor(cell: str = "") -> str:
    """The floor of ready actors an operator set for a while (actors/pool_floor.py), with its
    expiry as its TTL."""
    return f"quatro:cell:{cell}:pool:floor" if cell else "quatro:pool:floor"


def pool_spread(cell: str = "") -> str:
    """Which gateway of a cell spreads its pool over the nodes now (actors/placement.py): one
    at a time, with a short TTL, so that two never move the same surplus twice."""
    return f"quatro:cell:{cell}:pool:spread" if cell else "quatro:pool:spread"


def parked(cell: str = "") -> str:
    """The tables parked now (actors/parking.py), a sorted set: code -> the time (ms) its own
    wait ends it. A count for the gauges, never the truth about one table (its record is): a
    code may stay here after its table woke or ended, until a gateway's look removes it."""
    return f"quatro:cell:{cell}:parked" if cell else "quatro:parked"


def cell_tables(name: str) -> str:
    """The codes of the tables a cell runs (a set), so that a lost cell's tables are moved even
    when nobody asks for them (actors.directory's sweep). A code may outlive its table here:
    whoever finds it so removes it."""
    return f"quatro:cell:{name}:tables"


def cell(name: str) -> str:
    """A cell's registry record: JSON {free, total, reserve, internal}, with a short TTL that
    its gateways renew while their Ray answers (actors.cells)."""
    return f"quatro:cell:{name}"


def tag(code: str) -> str:
    """The prefix of every key of one table: its code as a Redis Cluster hash tag, so that all
    of them hash to one slot and a script may touch them together."""
    return f"quatro:{{{code}}}"


def table(code: str) -> str:
    """code -> JSON {table_id, actor, players}: how any gateway finds a table's actor."""
    return f"{tag(code)}:table"


def actor(name: str) -> str:
    """actor name -> code: how a restarted actor learns which table it serves (deleted when the
    actor goes back to the pool, actors/reuse.py); and table id -> code: how a replay (named by
    its table id, the actor's name before actors served table after table) finds its table's
    slot. Not in its table's slot: written and read in a step of its own."""
    return f"quatro:actor:{name}"


def snapshot(code: str) -> str:
    return f"{tag(code)}:snap"


def alive(code: str) -> str:
    """The table time (ms) its incarnation last knew itself alive, renewed about every second
    while a clock of the table runs (actors/clock.py): how long a restored table stood still."""
    return f"{tag(code)}:alive"


def log(code: str) -> str:
    """The tail of the table's published events, for resubscription after a restart."""
    return f"{tag(code)}:log"


def lost(code: str) -> str:
    """A tombstone: why a table whose saved state could not be read is gone."""
    return f"{tag(code)}:lost"


def session(token_hash: str) -> str:
    return f"quatro:session:{token_hash}"


def player_tables(player_id: str) -> str:
    """player -> hash {code: seat}."""
    return f"quatro:player:{player_id}"


def player_latest(player_id: str) -> str:
    """player -> the code of the table they last took a seat at or said hello to, seated: a
    table whose players all went on to another one stops soon (actors/departures.py)."""
    return f"quatro:player-latest:{player_id}"


def rate_limit(kind: str, ip: str) -> str:
    """A token bucket of one client IP (hash {tokens, at}, expiring once full again)."""
    return f"quatro:rl:{kind}:{ip}"


def player_tutorial(player_id: str) -> str:
    """(ext) The guided round: the code of the player's tutorial table, while it may be live."""
    return f"quatro:tutorial:{player_id}"


def open_lobbies(player_id: str) -> str:
    """player -> set of codes of the tables they created that may still be in their lobby."""
    return f"quatro:lobbies:{player_id}"


def replay(code: str, table_id: str) -> str:
    """A table's whole public and private event log (JSON entries, oldest first), kept for
    `QUATRO_REPLAY_TTL` after the table's last event: `GET /api/replays/{table_id}` reads it.
    Named by the table's actor name, unique per table (codes come back after a table stops),
    in its code's slot (the save appends to it); `actor(table_id)` names the code."""
    return f"{tag(code)}:replay:{table_id}"


def replay_meta(code: str, table_id: str) -> str:
    """JSON {code, players, start}: what a replay starts from (`start`: the public view of the
    empty table), kept as long as the replay."""
    return f"{tag(code)}:replay-meta:{table_id}"


def quick(players: int) -> str:
    """Quick play: the public tables of `players` seats now filling, shared by every gateway
    (hash token -> "level next until opened": the level it was opened at, the next seat to
    hand out, until when, and since when)."""
    return f"quatro:{{quick:{players}}}:filling"


def quick_table(token: str) -> str:
    """Quick play: a filling table's token -> its code once opened ("" if it failed to open)."""
    return f"quatro:quick:t:{token}"


def quick_seat(player_id: str) -> str:
    """Quick play: the player's quick-play seat, JSON {code, seat, players}, or "pending"."""
    return f"quatro:quick:me:{player_id}"


# -- Players: profiles, passkeys, ratings (issue 36) -------------------------------------------
# Designed for Redis Cluster from the start: every key carries a hash tag, and each script or
# multi-key command touches the keys of one tag only. A player's own keys share the player's id
# as their tag (`{p-…}`); each table size's ratings, leaderboard and applied matches share one
# tag (`{ratings:N}`), so a match's rating update is one atomic script; an operation over several
# players (a match's histories, a profile's deletion) is a sequence of such steps, each of them
# idempotent.


def profile(player_id: str) -> str:
    """A player's profile: hash {name, created, ratings_public, history_public, name_hidden,
    lasting} (issue 47, `lasting`: "1" kept for good, "0" a guest's, which expires with its
    last session; none: made before issue 47, not judged yet: gateway/guests.py)."""
    return f"quatro:{{{player_id}}}:profile"


def profile_gone(player_id: str) -> str:
    """A deleted profile's tombstone: its sessions are refused, its matches are not rated."""
    return f"quatro:{{{player_id}}}:gone"


def history(player_id: str) -> str:
    """A player's last matches: sorted set match id -> when it ended (ms)."""
    return f"quatro:{{{player_id}}}:history"


def wins(player_id: str) -> str:
    """The finished matches a player won (a set of match ids, at most NEWCOMER_WINS of them:
    engine.settings), rated or not, never at a practice table: while it holds fewer, the tables
    they open start their bots at relaxed."""
    return f"quatro:{{{player_id}}}:wins"


def passkeys(player_id: str) -> str:
    """A player's passkeys: hash key id -> JSON {credential (its SHA-256), label, created}."""
    return f"quatro:{{{player_id}}}:passkeys"


def reports(player_id: str) -> str:
    """Who reported the player's name under the rule before issue 47 (a set of player ids):
    read by nobody now, deleted with the profile, its rename, or an operator's clearing."""
    return f"quatro:{{{player_id}}}:reports"


def reporters(player_id: str) -> str:
    """The reports of the player's name that count (issue 47, gateway/reports.py), since its
    last change: hash reporter id -> the address tag the report came from."""
    return f"quatro:{{{player_id}}}:reporters"


def report_tags(player_id: str) -> str:
    """Every address tag of every reporter counted in `reporters`: a set, so that a second
    profile of one person (seen at one of those addresses) is not counted again."""
    return f"quatro:{{{player_id}}}:report-tags"


def seen(player_id: str) -> str:
    """Where the player's sessions were made or used from (issue 47): sorted set address tag
    (a keyed hash, never an address: gateway/address_tags.py) -> when last seen (ms), the
    newest few only, expiring."""
    return f"quatro:{{{player_id}}}:seen"


def owned(player_id: str) -> list[str]:
    """Every key a profile holds, on its slot (its tombstone aside): what a guest's expiry
    covers and a deletion removes. The profile hash first."""
    return [
        profile(player_id),
        history(player_id),
        wins(player_id),
        passkeys(player_id),
        reports(player_id),
        reporters(player_id),
        report_tags(player_id),
        seen(player_id),
    ]


# Profiles with counted reports of their name (sorted set player id -> when last reported,
# ms): an operator's list (gateway/reports.py). A key of its own, written after the report.
REPORTED = "quatro:reported"
# Issue 47's judging of the profiles made before it (gateway/guest_migration.py): hash
# {lease: "holder until_ms" while a gateway runs it, done: JSON of its last pass}.
GUEST_MIGRATION = "quatro:{guests}:migration"


def passkey(credential_hash: str) -> str:
    """One passkey by its credential id's SHA-256: hash {player, key, public_key, sign_count}."""
    return f"quatro:{{pk-{credential_hash}}}:passkey"


def challenge(challenge_id: str) -> str:
    """A WebAuthn challenge handed out and not yet used (JSON, a few minutes)."""
    return f"quatro:{{ch-{challenge_id}}}:challenge"


def rating_tag(players: int) -> str:
    return f"{{ratings:{players}}}"


def ratings(players: int) -> str:
    """Ratings at one table size: hash player id -> JSON {mu, sigma, played, won, v}."""
    return f"quatro:{rating_tag(players)}:ratings"


def board(players: int) -> str:
    """The leaderboard of one table size: sorted set player id -> displayed rating."""
    return f"quatro:{rating_tag(players)}:board"


def board_names(players: int) -> str:
    """The names a leaderboard shows: hash player id -> name, for the players who show their
    ratings (the others are listed without a name)."""
    return f"quatro:{rating_tag(players)}:names"


def rated(players: int) -> str:
    """The matches whose ratings are applied: hash match id -> JSON of what was applied
    (actors/ratings.py, `Settled`)."""
    return f"quatro:{rating_tag(players)}:rated"


def rated_at(players: int) -> str:
    """When each applied match was applied (sorted set), to forget the oldest."""
    return f"quatro:{rating_tag(players)}:rated-at"


def rating_fix(players: int) -> str:
    """The putting right of one size's ratings after issue 46 (actors/rating_fix.py): hash
    {lease: "holder until_ms" while a gateway runs it, freeze: the same while the size's
    applies wait for it (APPLY refuses while it is live), done: JSON of the last run}."""
    return f"quatro:{rating_tag(players)}:fix"


def met(players: int, a: str, b: str) -> str:
    """Issue 47: the counted matches of two opponents at one table size in the last day (sorted
    set match id -> when it ended, ms, expiring a day after the last), on the size's slot so
    that `APPLY` counts and adds in the same step. `a` < `b`."""
    return f"quatro:{rating_tag(players)}:met:{a}:{b}"


def unrated(players: int) -> str:
    """Deleted players (sorted set -> when): a match of theirs still pending is not rated."""
    return f"quatro:{rating_tag(players)}:unrated"


def match(match_id: str) -> str:
    """A finished match's record (JSON): teams, scores, seats, rating changes."""
    return f"quatro:{{m-{match_id}}}:match"
