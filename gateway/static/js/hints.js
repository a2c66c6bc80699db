// Hints for newcomers (the table's `hints` setting): one line worked out from this player's own
// view only — their hand, their team's sign, their floor and choice, and the public seat rows.
// It follows engine/hints.py (the reference, with its tests, where the order is argued): same
// names, same order, the same question before showing the team's sign without a carré, and
// the same calls that can only lose (a second tap before they go: calls.js).
import { html } from "./html.js";
import { Msg } from "./names.js";
import { hasCarre, partnerOf, teamSeats } from "./state.js";
import { Emoji, ICON } from "./emoji.js";

export function hintsOn(table) {
  return table.settings?.hints !== false;
}

// The partner holds the floor and last showed the team's sign: Quatro! is right (R15).
export function partnerShowsSign(table, seat) {
  const sign = table.sign;
  if (!sign || table.phase !== "playing") return false;
  const other = table.seats[partnerOf(seat, table.players)];
  return Boolean(other.floor) && other.emoji === sign;
}

// The partner's sign first: Quatro! judges the partner's hand, whatever this hand holds.
export function hintFor(table, seat, hand) {
  if (!hintsOn(table)) return null;
  const first = table.round === 1;
  if (table.phase === "signing") return first ? "tip_sign" : null;
  if (table.phase !== "playing") return null;
  if (partnerShowsSign(table, seat)) return "partner_sign";
  const sign = table.sign;
  if (hasCarre(hand) && sign) {
    if (!table.seats[seat].floor) return "carre_floor";
    return table.choice === sign ? "carre_wait" : "carre_sign";
  }
  return first ? "tip_play" : null;
}

// Showing the team's own sign without a carré tells the partner to call a wrong Quatro!: ask
// first, once a round (`confirmedRound`: the round already confirmed), never for a decoy.
export function signNeedsConfirm(table, hand, emoji, confirmedRound) {
  const sign = table.sign;
  return (
    table.phase === "playing" &&
    Boolean(sign) &&
    emoji === sign &&
    table.choice !== sign &&
    !hasCarre(hand) &&
    table.round !== confirmedRound
  );
}

// The partner holds the floor with an emoji on it, the sign or not.
export function partnerFloorShows(table, seat) {
  const other = table.seats[partnerOf(seat, table.players)];
  return Boolean(other.floor) && other.emoji != null;
}

// Whether the swaps everyone saw leave `team` a way to hold a carré: one of its players took,
// net, two cards of one rank from the centre since the deal (no hand is dealt three: R4).
export function carrePossible(table, team) {
  const net = table.net_taken ?? [];
  return teamSeats(team, table.players).some((s) => Object.values(net[s] ?? {}).some((k) => k >= 2));
}

// Quatro! with nothing on the partner's floor: likely a slip (R15). A carré of your own is left
// to R16's reminder, which asks anyway.
export function quatroNeedsConfirm(table, seat, hand) {
  return table.phase === "playing" && !hasCarre(hand) && !partnerFloorShows(table, seat);
}

// Contre! on a team that cannot hold a carré, by what everyone saw: it can only lose (R17).
export function contreNeedsConfirm(table, team) {
  return table.phase === "playing" && !carrePossible(table, team);
}

export function HintLine({ table, seat, hand }) {
  const hint = hintFor(table, seat, hand);
  // Always rendered, so that a new hint is spoken by the live region.
  return html`<p class="tip" role="status" data-hint=${hint || ""}>
    ${hint &&
    html`<${Emoji} e=${ICON.hint} label="" /> <${Msg} k=${`hint.${hint}`} vars=${{ sign: table.sign }} />`}
  </p>`;
}
