// The bar above the table: round, clock, scores, who holds the floor, watchers, the link.
import { useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { listOf, t } from "./i18n.js";
import { Name, teamLabel } from "./names.js";
import { Countdown } from "./ticking.js";
import { allowWatchers } from "./settings.js";
import { Emoji, ICON } from "./emoji.js";
import { escapeDetails, useDismiss } from "./popup.js";

export function StatusBar({ game, status }) {
  const tb = game.table;
  const teams = tb.players / 2;
  const clockLabel = {
    signing: t("status.signingClock"),
    playing: t("status.roundClock"),
    pause: t("status.pauseClock"),
  }[tb.phase];
  const floors = tb.seats.filter((s) => s.floor).map((s) => s.seat);
  return html`<div class="statusbar" aria-label=${t("status.bar")}>
    <span class="when">
      <span class="round-no">${t("status.round", { n: tb.round })}</span>
      ${clockLabel &&
      tb.deadline &&
      html`<span class="clock" data-phase=${tb.phase}>
        <span class="clock-label">${clockLabel}</span>
        <${Countdown} deadline=${tb.deadline} label=${clockLabel} />
      </span>`}
    </span>
    <ul class="scores" aria-label=${t("status.scores")}>
      ${Array.from(
        { length: teams },
        (_, k) => html`<li class="score team-${k} ${k === game.you.team ? "ours" : ""}" data-team=${k}>
          <span class="team-dot" aria-hidden="true"></span>
          <span class="team-label">${teamLabel(k)}</span>
          <strong class="points" data-score=${tb.scores[k]}>${tb.scores[k]}</strong>
        </li>`,
      )}
    </ul>
    <span class="floor-holders">
      ${floors.length
        ? html`<${Emoji} e=${ICON.floor} label="" /> ${listOf(
              floors.map((s) => html`<${Name} seats=${tb.seats} seat=${s} />`),
            )}`
        : html`<span class="muted">${t("status.noFloor")}</span>`}
    </span>
    ${status !== "replay" && !tb.tutorial && html`<${WatchCount} game=${game} />`}
    ${status === "replay"
      ? html`<span class="net net-replay tag">${t("replay.tag")}</span>`
      : html`<span class="net net-${status}" role="status">
          <span class="dot" aria-hidden="true"></span>${t(`conn.${status === "online" ? "online" : "offline"}`)}
        </span>`}
  </div>`;
}

// How many watch without a seat. The host can close the table to them from here, mid-match too:
// a switch that opens in the bar's flow (watchers.css) and closes on Escape or a press outside.
function WatchCount({ game }) {
  const [open, setOpen] = useState(false);
  const menu = useRef(null);
  const summary = useRef(null);
  useDismiss(open, () => setOpen(false), [menu], summary);
  const tb = game.table;
  const n = tb.watching ?? 0;
  const allowed = tb.settings?.watchers !== false;
  const label = allowed ? t("watch.count", { n }) : t("watch.closedShort");
  if (!game.you.host || game.you.watching) {
    if (!n) return null;
    return html`<span class="watch-count" data-count=${n} role="img" aria-label=${label} title=${label}>
      <span aria-hidden="true"><${Emoji} e=${ICON.watchers} label="" /> ${n}</span>
    </span>`;
  }
  return html`<details
    class="watch-count watch-menu"
    ref=${menu}
    open=${open}
    onToggle=${(e) => setOpen(e.currentTarget.open)}
    onKeyDown=${escapeDetails(setOpen, summary)}
    data-count=${n}
    data-open=${allowed ? "yes" : "no"}
  >
    <summary ref=${summary} aria-label=${label} title=${label}>
      <span aria-hidden="true"><${Emoji} e=${ICON.watchers} label="" /> ${allowed ? n : "⊘"}</span>
    </summary>
    <div class="popover">
      <label>
        <input
          type="checkbox"
          id="watchers-live-toggle"
          checked=${allowed}
          onChange=${(e) => allowWatchers(tb.code, e.currentTarget.checked)}
        />
        ${t("watch.allow")}
      </label>
    </div>
  </details>`;
}
