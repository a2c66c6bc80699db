// The seats around the centre: where each sits on screen, and what a seat shows.
//
// Seats do NOT mirror in Arabic. The ring is a picture of chairs around a real table: seat
// numbers run the same way for every player, so "the player after me" is the same person on a
// French and an Arabic screen, and swaps fly from the same side for both. Text inside each seat,
// the bars and the panels do follow the page direction (logical CSS properties), so only the
// geometry stays put; that is why the ring uses physical `left`/`top`.
import { html } from "./html.js";
import { listText, t } from "./i18n.js";
import { partnerOf } from "./state.js";
import { Name, seatName, teamLabel } from "./names.js";
import { Emoji, ICON, emojiName } from "./emoji.js";

// Where seat `s` sits on screen, relative to me at the bottom; partner straight across.
export function seatPosition(s, me, n) {
  const r = (s - me + n) % n;
  const angle = Math.PI / 2 + (r * 2 * Math.PI) / n;
  return { left: 50 + 42 * Math.cos(angle), top: 50 + 40 * Math.sin(angle) };
}

// A seat writes its team's number (the dot) and its seat number beside the name. On a phone a
// long name is cut; the seat takes focus (a tap or Tab) to show it whole, and its accessible name
// always holds it.
export function SeatView({ game, seat, pos, pulse }) {
  const tb = game.table;
  const row = tb.seats[seat];
  const partner = partnerOf(game.you.seat, tb.players) === seat;
  const handCount = tb.phase === "playing" ? 4 : 0;
  const labels = [
    teamLabel(row.team),
    partner ? t("seat.partner") : null,
    row.connected ? null : t("seat.offline"),
    row.floor ? t("seat.hasFloor") : null,
    tb.phase === "signing" && row.ready ? t("seat.ready") : null,
    row.emoji ? t("seat.shows", { emoji: emojiName(row.emoji) }) : null,
  ].filter(Boolean);
  return html`<div
    class="seat team-${row.team} ${partner ? "partner" : ""} ${row.connected ? "" : "offline"} ${row.floor ? "has-floor" : ""}"
    style=${`left:clamp(var(--seat-half), ${pos.left}%, calc(100% - var(--seat-half)));top:${pos.top}%`}
    data-seat=${seat}
    role="group"
    tabindex="0"
    aria-label=${`${seatName(tb.seats, seat)} — ${listText(labels)}`}
  >
    ${row.emoji &&
    html`<span class="bubble ${pulse ? "pulse" : ""}" key=${pulse} data-emoji=${row.emoji}
      ><${Emoji} e=${row.emoji} label="" /></span
    >`}
    <div class="seat-head">
      <span class="conn-dot" aria-hidden="true"></span>
      <span class="team-dot" aria-hidden="true"></span>
      <${Name} seats=${tb.seats} seat=${seat} />
    </div>
    <div class="seat-tags" aria-hidden="true">
      <span class="seat-number">${t("seat.short", { n: seat + 1 })}</span>
      ${row.kind === "bot" && html`<span class="tag bot-tag"><${Emoji} e=${ICON.bot} label="" /></span>`}
      ${partner && html`<span class="tag partner-tag">${t("seat.partner")}</span>`}
      ${row.floor && html`<span class="tag floor-tag"><${Emoji} e=${ICON.floor} label="" /></span>`}
      ${tb.phase === "signing" && row.ready && html`<span class="tag">✓</span>`}
      ${!row.connected && html`<span class="tag off">${t("seat.offline")}</span>`}
    </div>
    <div class="backs" aria-hidden="true">
      ${Array.from({ length: handCount }, () => html`<span class="back"></span>`)}
    </div>
  </div>`;
}
