// Hints for newcomers (the table's `hints` setting): one line worked out from this player's own
// view only — their hand, their team's sign, their floor and choice, and the public seat rows.
// It follows engine/hints.py (the reference, with its tests): same names, same order.
import { html } from "./html.js";
import { Msg } from "./names.js";
import { hasCarre, partnerOf } from "./state.js";
import { Emoji, ICON } from "./emoji.js";

export function hintsOn(table) {
  return table.settings?.hints !== false;
}

export function hintFor(table, seat, hand) {
  if (!hintsOn(table)) return null;
  const first = table.round === 1;
  if (table.phase === "signing") return first ? "tip_sign" : null;
  if (table.phase !== "playing") return null;
  const sign = table.sign;
  if (hasCarre(hand) && sign) {
    if (!table.seats[seat].floor) return "carre_floor";
    return table.choice === sign ? "carre_wait" : "carre_sign";
  }
  const other = table.seats[partnerOf(seat, table.players)];
  if (sign && other.floor && other.emoji === sign) return "partner_sign";
  return first ? "tip_play" : null;
}

export function HintLine({ table, seat, hand }) {
  const hint = hintFor(table, seat, hand);
  // Always rendered, so that a new hint is spoken by the live region.
  return html`<p class="tip" role="status" data-hint=${hint || ""}>
    ${hint &&
    html`<${Emoji} e=${ICON.hint} label="" /> <${Msg} k=${`hint.${hint}`} vars=${{ sign: table.sign }} />`}
  </p>`;
}
