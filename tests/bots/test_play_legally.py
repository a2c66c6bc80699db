"""Over 600 simulated matches at every bot level, bots only send what the engine accepts.

In simulated time every bot sees every event before it acts, so nothing a bot sends can lose a
race, and the only refusal allowed is `stale` (a swap whose expected card another player took
first, R11). Over a network a bot also meets races it cannot see: `stale`; `wrong_phase` for a
call or swap that arrives after another call ended the round (R18); `cooldown` or
`floor_cooldown` when its clock and the server's disagree; `vote_refused` when another vote
started first. Those are the timing races the policy is excused for; none occurs here.

Each command is also checked, before it is applied, against `engine.legal` on the seat's true
view; and a smart bot that holds a carré calls Quatro! only on its partner's: the partner's floor
shows the team's sign, or the partner holds a carré (R15 judges the partner's hand; R16).
"""

from __future__ import annotations

from collections import Counter

import pytest

from engine import CallQuatro, Command, Table
from engine.bots import make_bot
from engine.hints import partner_shows_sign
from engine.legal import SeatView, legal_for
from engine.seating import partner
from engine.settings import BOT_LEVELS
from engine.tournament import Runner, play_match
from tests.bots.harness import table_with

PAIRINGS = [("smart", "random"), ("random", "smart"), ("smart", "smart"), ("random", "random")]
RACES = {"stale"}
# 3 sizes x 2 table kinds x (53 smart-only + 2 x 22 mixed + 10 random-only) = 642 matches, the
# levels taken in turn. Rounds a random team plays run long (random-only ones their full three
# minutes; mixed ones nearly as long, the smart team's human-paced play against a centre random
# players churn), so fewer of those send as many commands as the rest and keep the suite fast.
MATCHES = {("smart", "random"): 22, ("random", "smart"): 22, ("smart", "smart"): 53}
RANDOM_ONLY_MATCHES = 10


@pytest.mark.parametrize("host_connected", [False, True], ids=["bots-only", "with-human"])
@pytest.mark.parametrize("pairing", PAIRINGS, ids=["-".join(p) for p in PAIRINGS])
@pytest.mark.parametrize("players", [4, 6, 8])
def test_bots_send_only_legal_commands(
    players: int, pairing: tuple[str, str], host_connected: bool
) -> None:
    policies = tuple(pairing[k % 2] for k in range(players // 2))
    refused: Counter[str] = Counter()
    illegal: list[tuple[int, Command]] = []
    calls_on_own_carre: list[int] = []
    kinds: Counter[str] = Counter()

    def check(table: Table, seat: int, command: Command, now: int) -> None:
        kinds[type(command).__name__] += 1
        seen = SeatView.parse(table.view(seat), seat)
        if command not in legal_for(seen, now):
            illegal.append((seat, command))
        ranks = {c.rank for c in seen.hand}
        smart = policies[seat % (players // 2)] == "smart"
        if smart and isinstance(command, CallQuatro) and len(ranks) == 1:
            mate = partner(seat, players)
            partners = {c.rank for c in SeatView.parse(table.view(mate), mate).hand}
            if not partner_shows_sign(table.view(seat), seat) and len(partners) != 1:
                calls_on_own_carre.append(seat)

    def count(seat: int, command: Command, code: str | None, at: int) -> None:
        if code is not None:
            refused[code] += 1

    for i in range(MATCHES.get(pairing, RANDOM_ONLY_MATCHES)):
        result = play_match(
            players,
            policies,
            seed=players * 10_000 + i,
            max_rounds=1 if i % 5 else 2,
            host_connected=host_connected,
            time_scale=0.05 if i % 7 == 0 else 1.0,
            speed=20.0 if i % 7 == 0 else 1.0,
            bot_level=BOT_LEVELS[i % len(BOT_LEVELS)],
            on_command=count,
            check=check,
        )
        assert result.rounds >= 1
    assert set(refused) <= RACES, refused
    assert illegal == []
    assert calls_on_own_carre == []
    assert kinds["Swap"] > 0
    assert kinds["CastVote"] == 0  # bots never vote (R19)


@pytest.mark.parametrize("policy", ["smart", "random"])
def test_bots_rebuilt_from_a_snapshot_mid_round_play_on_legally(policy: str) -> None:
    """A table actor that comes back from its snapshot makes new bots and syncs them from
    `table.view(seat)` in the middle of a round (R25); they must not trip over anything."""
    runner, _ = table_with(6, {s: policy for s in range(6)}, seed=31)
    runner.run(until=7_000)
    restored = Table.from_snapshot(runner.table.to_snapshot())
    refused: list[str] = []
    fresh = {
        s: make_bot(policy, s, 6, seed=100 + s, timings=restored.config.timings) for s in range(6)
    }
    again = Runner(
        restored,
        fresh,
        seed=2,
        now=runner.now,
        on_command=lambda s, c, code, at: refused.append(code) if code else None,
    )
    again.run(until=again.now + 5 * 60_000)
    assert restored.round >= 2
    assert set(refused) <= RACES
