"""What the store knows of a finished match's people that the match itself does not say (issue
47), read by the table that applies the match (actors/ratings.py) and handed to the one rule,
`engine.ratings.why_unrated`, as `Facts`:

- **Seen together.** Each rated person's address tags (`keys.seen`: keyed hashes of the
  addresses their sessions were made or used from, written by the gateway, gateway/sessions.py),
  those seen in the `SEEN_WINDOW_MS` before the match ended. Two rated people sharing a tag are
  one pair of `together`: the rule then rates nobody (`"same_person"`).
- **Met.** For every two opponents of the match, the counted matches between them at this
  table size in the rule's window before it (`keys.met`, written by `APPLY` itself with the
  ratings, on the size's slot): the most of them is `met`, which weighs the match (1/k) or,
  past the rule's count, leaves it unrated (`"repeated"`). The match itself is never counted:
  a retry of an applied match reads what its first attempt read.

One round trip: a pipeline of single-key reads, each on its own slot (the players' and the
size's), never a transaction.

A passkey adds nothing here, and cannot: a credential belongs to the one profile that
registered it first (gateway/passkeys.py), and WebAuthn makes a device's credentials for two
profiles unlinkable on purpose. What one device shares with itself is its address.
"""

from __future__ import annotations

from actors import keys
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline
from engine.ratings import REPEAT_WINDOW_MS, Facts, MatchResult

SEEN_WINDOW_MS = 24 * 3600 * 1000  # addresses seen this long before a match ended still count

READ = Pipeline("facts.read")


async def read_facts(redis: AsyncRedis, mid: str, result: MatchResult) -> Facts:
    """The facts of match `mid` for the rule (see the module's docstring)."""
    people = result.rated()
    pairs = result.opponents()
    pipe = READ.on(redis)
    for player_id in people:
        pipe.zrangebyscore(keys.seen(player_id), result.ended_at - SEEN_WINDOW_MS, "+inf")
    for a, b in pairs:
        pipe.zrangebyscore(
            keys.met(result.players, a, b), result.ended_at - REPEAT_WINDOW_MS, "+inf"
        )
    found = await READ.run(pipe)
    tags = {p: {str(t) for t in found[i]} for i, p in enumerate(people)}
    met = [sum(1 for m in found[len(people) + i] if str(m) != mid) for i in range(len(pairs))]
    return Facts(together(tags), max(met, default=0))


def together(tags: dict[str, set[str]]) -> frozenset[frozenset[str]]:
    """Every two players whose tag sets meet."""
    people = sorted(tags)
    return frozenset(
        frozenset((a, b))
        for i, a in enumerate(people)
        for b in people[i + 1 :]
        if a != b and tags[a] & tags[b]
    )


def met_keys(result: MatchResult) -> list[str]:
    """The keys of the match's opponents' counts, in `MatchResult.opponents` order."""
    return [keys.met(result.players, a, b) for a, b in result.opponents()]
