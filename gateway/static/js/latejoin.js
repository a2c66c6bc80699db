// Joining late, during a match: a watcher's request for a bot's seat, and the seated players'
// list of requests, which the host answers.
import { html } from "./html.js";
import { t } from "./i18n.js";
import { teamLabel } from "./names.js";

// Joining late, for a watcher: one button per bot seat ("Take seat N"), then the request's state
// until the next round's signing makes the seat theirs (the socket then closes 4411 and the
// page says hello again, seated).
export function LateJoin({ game, actions }) {
  const tb = game.table;
  const policy = tb.settings?.late_join ?? "ask";
  const mine = game.myClaim;
  if (mine !== null && mine !== undefined) {
    const claim = (tb.claims ?? []).find((c) => c.seat === mine);
    const granted = Boolean(claim?.approved);
    return html`<div class="late-join" data-claim=${mine} data-granted=${granted ? "yes" : "no"}>
      <p role="status" id="claim-status">
        ${t(granted ? "late.waitRound" : "late.waitHost", { seat: mine + 1 })}
      </p>
      <button type="button" id="cancel-claim" onClick=${() => actions.lateJoin("cancel")}>
        ${t("late.cancel")}
      </button>
    </div>`;
  }
  if (policy === "never" || tb.phase === "over") return null;
  const taken = new Set((tb.claims ?? []).map((c) => c.seat));
  const free = tb.seats.filter((s) => s.kind === "bot" && !taken.has(s.seat));
  if (free.length === 0) return null;
  return html`<div class="late-join">
    <p class="hint">${t(policy === "always" ? "late.leadAlways" : "late.leadAsk")}</p>
    <div class="late-seats">
      ${free.map(
        (s) => html`<button
          type="button"
          class="primary claim-seat team-${s.team}"
          key=${s.seat}
          id=${`claim-${s.seat}`}
          data-seat=${s.seat}
          onClick=${() => actions.lateJoin("claim", s.seat)}
        >
          <span class="team-dot" aria-hidden="true"></span>
          ${t("late.take", { seat: s.seat + 1, team: teamLabel(s.team) })}
        </button>`,
      )}
    </div>
  </div>`;
}

// Joining late, for the seated: who will take a bot's seat at the next round; the host answers
// the requests still waiting.
export function ClaimRequests({ game, actions }) {
  const tb = game.table;
  const isHost = game.you.host === true;
  return html`<section class="panel claim-requests" aria-label=${t("late.requests")}>
    <ul>
      ${tb.claims.map(
        (c) => html`<li key=${c.seat} data-seat=${c.seat} data-approved=${c.approved ? "yes" : "no"}>
          <span>
            ${t(c.approved ? "late.comes" : "late.asks", { name: c.name, seat: c.seat + 1 })}
          </span>
          ${isHost &&
          !c.approved &&
          html`<button
              type="button"
              class="primary"
              id=${`allow-claim-${c.seat}`}
              onClick=${() => actions.lateJoin("answer", c.seat, true)}
            >
              ${t("late.allow")}
            </button>
            <button
              type="button"
              id=${`refuse-claim-${c.seat}`}
              onClick=${() => actions.lateJoin("answer", c.seat, false)}
            >
              ${t("late.refuse")}
            </button>`}
        </li>`,
      )}
    </ul>
  </section>`;
}
