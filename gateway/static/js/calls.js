// The calls: Quatro! (confirmed first when your own hand is a carré: R16's reminder that the call
// judges the partner's hand), Contre! (naming the team at 6 or 8 seats) and the request for a
// reshuffle vote.
import { useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { hasCarre, teamSeats } from "./state.js";
import { Msg, Name, teamLabel } from "./names.js";
import { Dialog } from "./panels.js";
import { partnerShowsSign } from "./hints.js";

export function CallButtons({ game, actions, hand }) {
  const [dialog, setDialog] = useState(null);
  const tb = game.table;
  const n = tb.players;
  const playing = tb.phase === "playing";
  function quatro() {
    if (hasCarre(hand)) setDialog("quatro");
    else actions.quatro();
  }
  function contre() {
    if (n === 4) actions.contre(null);
    else setDialog("contre");
  }
  const others = Array.from({ length: n / 2 }, (_, k) => k).filter((k) => k !== game.you.team);
  const vote = tb.vote;
  // The reminder says whether the partner's sign is showing: then the call is the right one.
  const partnerSign = partnerShowsSign(tb, game.you.seat);
  return html`<div class="calls">
    <button type="button" class="call quatro" id="call-quatro" disabled=${!playing} onClick=${quatro}>
      ${t("call.quatro")}
    </button>
    <button type="button" class="call contre" id="call-contre" disabled=${!playing} onClick=${contre}>
      ${t("call.contre")}
    </button>
    <button
      type="button"
      class="vote-btn"
      disabled=${!playing || tb.reshuffled || !!vote}
      onClick=${actions.voteRequest}
    >
      ${t("vote.request")}
    </button>
    ${dialog === "quatro" &&
    html`<${Dialog} title=${t("r16.title")} onClose=${() => setDialog(null)}>
      <p class="r16-body" data-partner-sign=${partnerSign ? "yes" : "no"}>
        ${partnerSign ? html`<${Msg} k="r16.partnerSign" vars=${{ sign: tb.sign }} />` : t("r16.body")}
      </p>
      <div class="row">
        <button type="button" class="call quatro" id="confirm-quatro" onClick=${() => (setDialog(null), actions.quatro())}>
          ${t("r16.confirm")}
        </button>
        <button type="button" onClick=${() => setDialog(null)}>${t("common.cancel")}</button>
      </div>
    <//>`}
    ${dialog === "contre" &&
    html`<${Dialog} title=${t("contre.pick")} onClose=${() => setDialog(null)}>
      <div class="team-choice">
        ${others.map(
          (k) => html`<button
            type="button"
            class="team-${k}"
            data-team=${k}
            onClick=${() => (setDialog(null), actions.contre(k))}
          >
            <span class="team-dot" aria-hidden="true"></span>
            ${`${teamLabel(k)} — `}${teamSeats(k, n).map(
              (s, i) => html`${i ? " & " : ""}<${Name} seats=${tb.seats} seat=${s} />`,
            )}
          </button>`,
        )}
      </div>
      <button type="button" onClick=${() => setDialog(null)}>${t("common.cancel")}</button>
    <//>`}
  </div>`;
}
