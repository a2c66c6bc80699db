"""The answers a table gave to its recent commands, by command id (`Act.cmd_id`): a gateway that
lost a reply (a link dropped, a restart) sends the command again with the same id and gets the
first answer back, never a second application. The newest travel in the snapshot, so that a
retry reaching a restarted incarnation is recognised too; a retry comes within seconds, so a
few dozen are enough there.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from actors.protocol import ErrorBody, Outcome

REMEMBERED = 256  # recent command ids (and their answers) kept for retries
SAVED = 64  # of which the snapshot keeps the newest


class Answered:
    def __init__(self, saved: Iterable[tuple[str, dict[str, Any]]] = ()) -> None:
        """`saved`: what a snapshot kept (`to_snapshot`), oldest first."""
        self._answers: OrderedDict[str, dict[str, Any]] = OrderedDict(saved)

    def remember(self, cmd_id: str, reply: Outcome) -> None:
        error = None if reply.error is None else reply.error.to_wire()
        self._answers[cmd_id] = {"ok": reply.ok, "error": error, "seat": reply.seat}
        while len(self._answers) > REMEMBERED:
            self._answers.popitem(last=False)

    def recall(self, cmd_id: str) -> Outcome | None:
        """The answer a command of this id got, when it was judged already (a retry)."""
        saved = self._answers.get(cmd_id)
        if saved is None:
            return None
        error, seat = saved.get("error"), saved.get("seat")
        return Outcome(
            bool(saved.get("ok")),
            None if error is None else ErrorBody.from_wire(error),
            None if seat is None else int(seat),
            replayed=True,
        )

    def to_snapshot(self) -> list[tuple[str, dict[str, Any]]]:
        return list(self._answers.items())[-SAVED:]
