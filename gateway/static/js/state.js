// The table as this player knows it: the welcome snapshot, then every event applied in order by
// a pure reducer. Optimistic swaps live apart in `pending` and are laid over the server's truth
// only for display, so a refusal rolls back by simply dropping the pending entry.

const BASE = { swap: 2000, floor: 2000, round: 180_000, signing: 30_000 };
const HISTORY = 8;

export function fromWelcome(frame, previous) {
  return {
    you: frame.you,
    table: frame.table,
    pending: [],
    history: recentEmissions(frame.table),
    lastSwap: null,
    signBy: null,
    timeScale: previous?.timeScale ?? 1,
    voteResult: null,
    redeals: 0,
    rev: (previous?.rev ?? 0) + 1,
    // Joining late: the bot's seat this watcher asked for. A watcher's hello says it; a fresh
    // snapshot after missed events does not, and keeps what we knew.
    myClaim: frame.you.watching
      ? frame.table.my_claim !== undefined
        ? frame.table.my_claim
        : (previous?.myClaim ?? null)
      : null,
  };
}

// The round's latest emissions as the snapshot carries them (oldest first), newest first here,
// numbered so that each keeps its key; a reload shows what the page showed before.
function recentEmissions(table) {
  const list = table.emissions ?? [];
  return list
    .map((e, i) => ({ seat: e.seat, emoji: e.emoji, n: i + 1 }))
    .reverse()
    .slice(0, HISTORY);
}

// What each seat took from the centre, net, since its hand was dealt (the snapshot's
// `net_taken`, kept up by the swaps everyone sees): a rank back at zero leaves the tally.
function tallySwap(netTaken, seat, taken, placed) {
  if (taken === placed) return netTaken;
  return netTaken.map((tally, s) => {
    if (s !== seat) return tally;
    const next = { ...tally };
    for (const [rank, step] of [[taken, 1], [placed, -1]]) {
      const count = (next[rank] ?? 0) + step;
      if (count) next[rank] = count;
      else delete next[rank];
    }
    return next;
  });
}

const noneTaken = (tb) => tb.seats.map(() => ({}));

function withSeat(seats, seat, patch) {
  return seats.map((row) => (row.seat === seat ? { ...row, ...patch } : row));
}

export function reduce(state, ev) {
  const tb = state.table;
  const me = state.you.seat;
  const scale = state.timeScale;
  const next = (table, extra = {}) => ({ ...state, ...extra, table: { ...tb, ...table } });
  switch (ev.type) {
    case "seat":
      return next({
        seats: withSeat(tb.seats, ev.seat, {
          name: ev.name,
          kind: ev.kind,
          connected: ev.connected,
        }),
      });
    case "settings":
      return next({
        settings: {
          bot_level: ev.bot_level,
          hints: ev.hints,
          late_join: ev.late_join,
          watchers: ev.watchers !== false,
        },
      });
    case "watching":
      return next({ watching: ev.count });
    case "claim": {
      const claims = (tb.claims ?? []).filter((c) => c.seat !== ev.seat);
      if (ev.name !== null) claims.push({ seat: ev.seat, name: ev.name, approved: ev.approved });
      claims.sort((a, b) => a.seat - b.seat);
      const ended = ev.name === null && state.myClaim === ev.seat;
      return next({ claims }, ended ? { myClaim: null } : {});
    }
    case "signing": {
      const fresh = tb.phase === "over" || tb.phase === "lobby";
      const timeScale = ev.at && ev.deadline ? (ev.deadline - ev.at) / BASE.signing : scale;
      return next(
        {
          phase: "signing",
          round: ev.round,
          deadline: ev.deadline,
          sign: null,
          hand: [],
          center: [],
          vote: null,
          reshuffled: false,
          swap_ready_at: null,
          floor_ready_at: null,
          choice: null,
          scores: fresh ? tb.scores.map(() => 0) : tb.scores,
          winners: null,
          ratings: fresh ? null : tb.ratings,
          last_reveal: fresh ? null : tb.last_reveal,
          seats: tb.seats.map((row) => ({ ...row, ready: false, floor: false, emoji: null })),
          net_taken: noneTaken(tb),
        },
        { pending: [], signBy: null, history: [], lastSwap: null, voteResult: null, timeScale },
      );
    }
    case "ready":
      return next({ seats: withSeat(tb.seats, ev.seat, { ready: true }) });
    case "sign":
      return next({ sign: ev.emoji }, { signBy: ev.by });
    case "round": {
      const timeScale = ev.at && ev.deadline ? (ev.deadline - ev.at) / BASE.round : scale;
      return next(
        {
          phase: "playing",
          round: ev.round,
          hand: ev.hand,
          center: ev.center,
          deadline: ev.deadline,
          net_taken: noneTaken(tb),
        },
        { pending: [], redeals: ev.redeals, timeScale },
      );
    }
    case "swapped": {
      const center = tb.center.slice();
      center[ev.slot] = ev.placed;
      const netTaken = tb.net_taken ?? noneTaken(tb);
      const patch = { center, net_taken: tallySwap(netTaken, ev.seat, ev.taken.rank, ev.placed.rank) };
      let pending = state.pending;
      if (ev.seat === me) {
        patch.hand = tb.hand.map((c) => (c.id === ev.placed.id ? ev.taken : c));
        patch.swap_ready_at = ev.at + BASE.swap * scale;
        pending = pending.filter((p) => p.card !== ev.placed.id);
      }
      return next(patch, {
        pending,
        lastSwap: { seat: ev.seat, slot: ev.slot, n: (state.lastSwap?.n ?? 0) + 1 },
      });
    }
    case "floor": {
      const patch = { seats: withSeat(tb.seats, ev.seat, { floor: ev.open }) };
      if (ev.seat === me) {
        patch.floor_ready_at = ev.at + BASE.floor * scale;
        if (!ev.open) patch.choice = null;
      }
      return next(patch);
    }
    case "emission": {
      const item = { seat: ev.seat, emoji: ev.emoji, n: (state.history[0]?.n ?? 0) + 1 };
      return next(
        { seats: withSeat(tb.seats, ev.seat, { emoji: ev.emoji }) },
        { history: [item, ...state.history].slice(0, HISTORY) },
      );
    }
    case "vote":
      return next(
        { vote: { by: ev.by, voters: ev.voters, deadline: ev.deadline, accepted: [] } },
        { voteResult: null },
      );
    case "voted":
      if (!tb.vote) return state;
      return next({
        vote: {
          ...tb.vote,
          accepted: ev.accept ? [...tb.vote.accepted, ev.seat] : tb.vote.accepted,
          refused: ev.accept ? tb.vote.refused : ev.seat,
        },
      });
    case "vote_result":
      return next({ vote: null }, { voteResult: { passed: ev.passed, n: ev.seq ?? Date.now() } });
    case "reshuffled":
      return next(
        { hand: ev.hand, center: ev.center, reshuffled: true, net_taken: noneTaken(tb) },
        { pending: [], redeals: ev.redeals },
      );
    case "reveal": {
      const { type, seq, at, ...reveal } = ev;
      return next(
        {
          last_reveal: reveal,
          scores: ev.scores,
          vote: null,
          choice: null,
          seats: tb.seats.map((row) => ({ ...row, floor: false })),
        },
        { pending: [] },
      );
    }
    case "pause":
      return next({ phase: "pause", deadline: ev.deadline });
    case "over":
      return next({ phase: "over", winners: ev.winners, scores: ev.scores, deadline: null });
    // (ext) The table stood still (a fault) and got that time back (issue 37): the new
    // deadlines as the server gives them; our own cooldowns move by the same shift.
    case "resumed": {
      const later = (at) => (typeof at === "number" ? at + ev.shift : at);
      const patch = {
        deadline: ev.deadline,
        vote: tb.vote && ev.vote_deadline !== null ? { ...tb.vote, deadline: ev.vote_deadline } : tb.vote,
        vote_ready_at: ev.vote_ready_at,
        swap_ready_at: later(tb.swap_ready_at),
        floor_ready_at: later(tb.floor_ready_at),
      };
      if (tb.phase === "lobby" && tb.fills_at) patch.fills_at = ev.deadline;
      return next(patch);
    }
    // (ext) The guided round's next instruction to its learner (engine/coach.py).
    case "tutorial": {
      const { type, seq, at, ...coached } = ev;
      return next({ tutorial: { type, ...coached } });
    }
    // (ext) The match's rating changes, told once it is over (issue 36).
    case "ratings":
      return next({ ratings: { match: ev.match, changes: ev.changes } });
    default:
      return state;
  }
}

// Local intents, never sent to the reducer by the server.
export function addPending(state, swap) {
  return { ...state, pending: [...state.pending, swap] };
}

export function dropPending(state, card) {
  return { ...state, pending: state.pending.filter((p) => p.card !== card) };
}

export function setChoice(state, emoji) {
  return { ...state, table: { ...state.table, choice: emoji } };
}

// The hand and centre as shown: the server's truth with our unanswered swaps laid over it.
export function shown(state) {
  let hand = state.table.hand;
  let center = state.table.center;
  for (const p of state.pending) {
    const i = hand.findIndex((c) => c.id === p.card);
    const inSlot = center[p.slot];
    if (i < 0 || !inSlot || inSlot.id !== p.expect) continue;
    hand = hand.slice();
    center = center.slice();
    hand[i] = inSlot;
    center[p.slot] = p.cardObj;
  }
  return { hand, center };
}

export function hasCarre(hand) {
  return hand.length === 4 && hand.every((c) => c.rank === hand[0].rank);
}

export function teamsOf(players) {
  return players / 2;
}

export function partnerOf(seat, players) {
  return (seat + players / 2) % players;
}

export function teamSeats(team, players) {
  return [team, team + players / 2];
}
