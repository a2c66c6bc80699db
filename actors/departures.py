"""Whether every person of a table has gone from it for good, so that it may stop soon and its
actor serve the next table (actors/reuse.py) instead of idling out its long wait.

A person has gone when they hold no connection to the table and their session's records say
they are not coming back to it: the latest table they took a seat at or said hello to, seated,
is another one (`keys.player_latest`, written by the gateway's `Sessions.seated`), or the table
is no longer among theirs (they left it, or the home page dropped it once its match was over:
`GET /api/sessions/tables`) while their records still name a latest. A person with no records
at all (expired, or never written by an older gateway) is not taken for gone. A person who only
lost their link (a phone on a bad network, a reload) is not gone: their records still name this
table as their latest, and a hello there names it again. So a match in play with a player who
dropped keeps its long wait (`QUATRO_ABANDONED_IDLE`); one whose every player sits at another
table now does not.

The look reads two keys per person, each of their own slot (one round trip per node on a Redis
Cluster), and is made at most every `LOOK_EVERY_S` while nobody is connected, never while
someone is. Redis out of reach answers None: nobody is taken for gone on no evidence.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import redis

from actors import keys
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline

# While nobody is connected, how often a table looks whether its people have gone for good: a
# grace of seconds is measured from the first look that finds them gone.
LOOK_EVERY_S = 5.0
LOOK_TIMEOUT_S = 2.0

# Each person's table records and latest table, read (two keys of one player each).
LOOK = Pipeline("departures.look")


def _text(value: object) -> str | None:
    if isinstance(value, bytes):
        return value.decode()
    return None if value is None else str(value)


async def all_gone(client: AsyncRedis, code: str, people: Sequence[str]) -> bool | None:
    """Whether every one of `people` (player ids, none of them connected to `code`) has gone
    from table `code` for good; None when Redis did not answer in time. A table without a
    person has nobody to wait for: True."""
    if not people:
        return True
    pipe = LOOK.on(client)
    for player in people:
        pipe.hexists(keys.player_tables(player), code)
        pipe.get(keys.player_latest(player))
    answers: list[object] | None = None
    with contextlib.suppress(redis.RedisError, OSError, TimeoutError):
        async with asyncio.timeout(LOOK_TIMEOUT_S):
            answers = await LOOK.run(pipe)
    if answers is None:
        return None
    for i in range(len(people)):
        seated, latest = bool(answers[2 * i]), _text(answers[2 * i + 1])
        if latest is None or (seated and latest == code):
            return False  # still theirs and nothing newer, or nothing known: may come back
    return True
