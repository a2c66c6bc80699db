"""The guided round's bots (engine.tutorial): each seat plays its part of the lesson and nothing
else, and waits for the learner. A bot sees only its seat's view and events (R30), like any:
the caller calls on the sign it sees on the learner's floor, never on the learner's hand, and
a collector collects from the centre it sees.

    caller      lesson 1, the partner: Quatro! CALL_MS after the learner's floor shows the
                team's sign (a sign shown without a carré makes the call wrong, as in a game)
    collector   lessons 2 and 3: READ_MS after the deal, swaps its odd cards for the centre's
                cards of its pair's rank, a move every MOVE_GAP_MS once its cooldown is over;
                then takes the floor and shows its team's sign, and keeps it shown (R13)
    (no role)   seated, ready, still

As lesson 3's signing begins, the collector picks OPPONENT_SIGN for its team (the learner's
partner has picked PARTNER_SIGN for theirs in that same step: engine.rounds.begin_signing); in
lessons 1 and 2 the learner picks their team's sign and the bots never do. The script's pace is
fixed, not drawn: `speed` only follows a test table's time_scale.
"""

from __future__ import annotations

from engine.bots.base import Bot, Intent
from engine.commands import CallQuatro, ChooseSign, Emit, SetFloor, Swap
from engine.phase import Phase
from engine.tutorial import (
    CALL_MS,
    LEARNER,
    MOVE_GAP_MS,
    OPPONENT,
    OPPONENT_SIGN,
    READ_MS,
    Role,
    role,
)


class ScriptedBot(Bot):
    kind = "scripted"

    def _after(self, ms: int) -> int:
        return max(1, round(ms / self.pace.speed))

    def plan(self, now: int) -> Intent | None:
        m = self.model
        if m.phase is Phase.SIGNING:
            if self.seat == OPPONENT and m.round == 3 and m.sign is None:
                return Intent(ChooseSign(seat=self.seat, emoji=OPPONENT_SIGN), now)
            return None
        if m.phase is not Phase.PLAYING:
            return None
        part = role(m.round, self.seat)
        if part is Role.CALLER:
            return self._call(now)
        if part is Role.COLLECTOR:
            return self._collect(now)
        return None

    def _call(self, now: int) -> Intent | None:
        m = self.model
        if m.sign is None or not m.floors[LEARNER]:
            return None
        # Since when the learner's floor has shown the sign without a break: the floor repeats
        # it every 5 s (R13), and each repeat must not put the call off again.
        since = None
        for e in reversed(m.emissions):
            if e.seat != LEARNER:
                continue
            if e.emoji != m.sign:
                break
            since = e.at
        if since is None:
            return None
        return Intent(CallQuatro(seat=self.seat), max(now, since + self._after(CALL_MS)))

    def _collect(self, now: int) -> Intent | None:
        m = self.model
        started = m.opened_at + self._after(READ_MS)
        counts = m.hand_ranks()
        offered = [r for r in counts if any(c.rank == r for c in m.center)] or list(counts)
        rank = max(offered, key=lambda r: counts[r])
        if counts[rank] < 4:
            last = m.last_swap_at[self.seat]
            ready = max(started, m.swap_ready_at + self._after(MOVE_GAP_MS) if last else 0)
            card = next((c for c in m.hand if c.rank != rank), None)
            slot = next((i for i, c in enumerate(m.center) if c.rank == rank), None)
            if card is None or slot is None:
                return None
            swap = Swap(seat=self.seat, card=card.id, slot=slot, expect=m.center[slot].id)
            return Intent(swap, max(now, ready))
        if not m.floors[self.seat]:
            last = m.last_swap_at[self.seat] or m.opened_at
            at = max(last + self._after(MOVE_GAP_MS), m.floor_ready_at)
            return Intent(SetFloor(seat=self.seat, open=True), max(now, at))
        if m.sign is not None and m.choice != m.sign:
            opened = m.floor_ready_at - m.timings.floor_cooldown
            at = opened + self._after(MOVE_GAP_MS)
            return Intent(Emit(seat=self.seat, emoji=m.sign), max(now, at))
        return None
