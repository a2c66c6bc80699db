// The calls: Quatro! (confirmed first when your own hand is a carré: R16's reminder that the call
// judges the partner's hand), Contre! (naming the team at 6 or 8 seats) and the request for a
// reshuffle vote. A call that can only lose takes a second tap (js/guard.js); Quatro! and
// Contre! sit a thumb's width apart (css/your-area.css, css/phone.css).
import { useState } from "preact/hooks";
import { html } from "./html.js";
import { listOf, t } from "./i18n.js";
import { hasCarre, teamSeats } from "./state.js";
import { Msg, Name, teamLabel } from "./names.js";
import { Dialog } from "./panels.js";
import { contreNeedsConfirm, partnerShowsSign, quatroNeedsConfirm } from "./hints.js";
import { Again, guardState, useSecondTap } from "./guard.js";

export function CallButtons({ game, actions, hand }) {
  const [dialog, setDialog] = useState(null);
  const tb = game.table;
  const n = tb.players;
  const me = game.you.seat;
  const playing = tb.phase === "playing";
  const { armed, press, disarm } = useSecondTap(game.timeScale, tb.phase, tb.round);
  const close = () => (disarm(), setDialog(null));
  function quatro() {
    if (hasCarre(hand)) setDialog("quatro");
    else press("quatro", quatroNeedsConfirm(tb, me, hand), actions.quatro);
  }
  function contre() {
    if (n === 4) {
      const them = 1 - game.you.team;
      press("contre", contreNeedsConfirm(tb, them), () => actions.contre(null));
    } else setDialog("contre");
  }
  function accuse(k) {
    press(`team-${k}`, contreNeedsConfirm(tb, k), () => (setDialog(null), actions.contre(k)));
  }
  const others = Array.from({ length: n / 2 }, (_, k) => k).filter((k) => k !== game.you.team);
  const vote = tb.vote;
  // The reminder says whether the partner's sign is showing: then the call is the right one.
  const partnerSign = partnerShowsSign(tb, me);
  const state = (what) => guardState(armed, what);
  return html`<div class="calls">
    <button
      type="button"
      class="call quatro ${state("quatro") ? "armed" : ""}"
      id="call-quatro"
      data-guard=${state("quatro")}
      disabled=${!playing}
      onClick=${quatro}
    >
      ${state("quatro") && html`<${Again} armed=${armed} />`}
      <span class="call-name">${t("call.quatro")}</span>
    </button>
    <button
      type="button"
      class="call contre ${state("contre") ? "armed" : ""}"
      id="call-contre"
      data-guard=${state("contre")}
      disabled=${!playing}
      onClick=${contre}
    >
      ${state("contre") && html`<${Again} armed=${armed} />`}
      <span class="call-name">${t("call.contre")}</span>
    </button>
    <button
      type="button"
      class="vote-btn"
      disabled=${!playing || tb.reshuffled || !!vote || tb.tutorial}
      onClick=${actions.voteRequest}
    >
      ${t("vote.request")}
    </button>
    ${dialog === "quatro" &&
    html`<${Dialog} title=${t("r16.title")} onClose=${close}>
      <p class="r16-body" data-partner-sign=${partnerSign ? "yes" : "no"}>
        ${partnerSign ? html`<${Msg} k="r16.partnerSign" vars=${{ sign: tb.sign }} />` : t("r16.body")}
      </p>
      <div class="row">
        <button type="button" class="call quatro" id="confirm-quatro" onClick=${() => (setDialog(null), actions.quatro())}>
          ${t("r16.confirm")}
        </button>
        <button type="button" onClick=${close}>${t("common.cancel")}</button>
      </div>
    <//>`}
    ${dialog === "contre" &&
    html`<${Dialog} title=${t("contre.pick")} onClose=${close}>
      <div class="team-choice">
        ${others.map(
          (k) => html`<button
            type="button"
            class="team-${k} ${state(`team-${k}`) ? "armed" : ""}"
            data-team=${k}
            data-guard=${state(`team-${k}`)}
            onClick=${() => accuse(k)}
          >
            ${state(`team-${k}`) && html`<${Again} armed=${armed} />`}
            <span class="team-dot" aria-hidden="true"></span>
            ${`${teamLabel(k)} — `}${listOf(teamSeats(k, n).map((s) => html`<${Name} seats=${tb.seats} seat=${s} />`))}
          </button>`,
        )}
      </div>
      <button type="button" onClick=${close}>${t("common.cancel")}</button>
    <//>`}
  </div>`;
}
