"""Leaderboards (issue 36): one Redis sorted set per table size, player id -> displayed rating,
read a page at a time, with the caller's own rank. A page is two commands on one slot (the
size's `{ratings:N}`: the board, then the names and standings of that page's players), however
many players the board holds: ZREVRANGE and ZREVRANK are O(log N + page).

A board lists established players only (issue 46): a rating stays provisional, and off the
board, for its first `engine.ratings.ESTABLISHED_AFTER` rated matches at the size. A player's
own row says so: no rank, and how many rated matches remain before they are listed.

A player who does not show their ratings is on the board all the same (the ranks count every
listed player) but without a name or a link: others see a rank and a rating, nothing that says
whose. A name reported enough times (gateway/profiles.py) is listed the same way until its
owner changes it."""

from __future__ import annotations

from typing import Any

from actors import keys
from actors.ratings import Standing
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline
from engine.ratings import provisional, to_establish

PAGE = 20
MAX_PAGE = 10_000  # past the 200,000th row a page is refused (nobody reads that far)

# Reads of one size's slot, never a transaction: a page read while a match is applied may show
# a row's old rating beside a new rank, which the next read puts right; nothing is written.
# The board's size, a page of it and the caller's rank.
PAGE_READ = Pipeline("leaderboards.page")
# The names and standings of a page's players.
ROWS = Pipeline("leaderboards.rows")


class Leaderboards:
    def __init__(self, redis: AsyncRedis) -> None:
        self.redis = redis

    async def page(self, players: int, page: int, me: str | None) -> dict[str, Any]:
        start = (page - 1) * PAGE
        board = keys.board(players)
        pipe = PAGE_READ.on(self.redis)
        pipe.zcard(board)
        pipe.zrevrange(board, start, start + PAGE - 1, withscores=True)
        if me is not None:
            pipe.zrevrank(board, me)
        found = await PAGE_READ.run(pipe)
        total, ranked = int(found[0]), list(found[1])
        mine = found[2] if me is not None else None
        ids = [str(pid) for pid, _ in ranked]
        rows = await self._rows(players, ids, start + 1, me)
        own = None
        if me is not None:
            own = next((r for r in rows if r["me"]), None)
            if own is None:
                own = await self._own(players, me, mine)
        return {
            "players": players,
            "page": page,
            "pages": max(1, -(-total // PAGE)),
            "total": total,
            "rows": rows,
            "me": own,
        }

    async def row(self, players: int, me: str) -> dict[str, Any] | None:
        """The player's own row, with their rank once listed (else none, and the rated
        matches that remain); None before their first rated match."""
        return await self._own(players, me, await self.redis.zrevrank(keys.board(players), me))

    async def _own(self, players: int, me: str, rank: Any) -> dict[str, Any] | None:
        if rank is not None:
            (own,) = await self._rows(players, [me], int(rank) + 1, me)
            return own
        if await self.redis.hget(keys.ratings(players), me) is None:
            return None
        (own,) = await self._rows(players, [me], None, me)
        return own

    async def _rows(
        self, players: int, ids: list[str], first_rank: int | None, me: str | None
    ) -> list[dict[str, Any]]:
        """Rows from `first_rank` on (None: an own row not listed)."""
        if not ids:
            return []
        pipe = ROWS.on(self.redis)
        pipe.hmget(keys.board_names(players), ids)
        pipe.hmget(keys.ratings(players), ids)
        names, standings = await ROWS.run(pipe)
        rows = []
        for i, (pid, name, raw) in enumerate(zip(ids, names, standings, strict=True)):
            s = Standing.read(raw)
            rows.append(
                {
                    "rank": None if first_rank is None else first_rank + i,
                    "rating": s.rating.display,
                    "played": s.played,
                    "won": s.won,
                    "provisional": provisional(s.played),
                    "remaining": to_establish(s.played),
                    "name": None if name is None else str(name),
                    "profile": None if name is None else pid,
                    "me": pid == me,
                }
            )
        return rows
