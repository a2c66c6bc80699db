// The floor: taking it (and its lock), the emoji shown on it, and the list of emissions. Showing
// the team's own sign without a carré is asked about first (engine/hints.py says when).
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { Msg, Name } from "./names.js";
import { serverNow } from "./servertime.js";
import { useRerenderAt } from "./ticking.js";
import { Dialog, EmojiGrid } from "./panels.js";
import { hintsOn, signNeedsConfirm } from "./hints.js";
import { Emoji, ICON } from "./emoji.js";
import { useDismiss } from "./popup.js";

// The floor's lock as a bar that drains once, its length the time left when it appears (kept, as
// the cooldown ring's is, so that a later render does not make it jump ahead).
function Lock({ at }) {
  const [left] = useState(() => at - serverNow());
  return html`<span class="lock" style=${`animation-duration:${left}ms`}
    ><span class="visually-hidden">${t("floor.locked")}</span></span
  >`;
}

export function FloorControls({ game, actions, hand }) {
  const tb = game.table;
  useRerenderAt(tb.floor_ready_at);
  const mine = tb.seats[game.you.seat];
  const locked = !!tb.floor_ready_at && tb.floor_ready_at > serverNow();
  const [picker, setPicker] = useState(false);
  const floorBtn = useRef(null);
  const emitBtn = useRef(null);
  const pickerBox = useRef(null);
  // The sign waiting for the player's word, and the round in which they gave it: asked once.
  const [asking, setAsking] = useState(null);
  const confirmedRound = useRef(null);
  function show(emoji) {
    setPicker(false);
    if (signNeedsConfirm(tb, hand, emoji, confirmedRound.current)) {
      setAsking(emoji);
      return;
    }
    actions.emit(emoji);
    emitBtn.current?.focus();
  }
  function answer(yes) {
    if (yes) {
      confirmedRound.current = tb.round;
      actions.emit(asking);
    }
    setAsking(null);
    emitBtn.current?.focus();
  }
  // Taking the floor is for showing an emoji: the button that does it comes next.
  useEffect(() => {
    if (mine.floor && floorBtn.current && document.activeElement === floorBtn.current) {
      emitBtn.current?.focus();
    }
  }, [mine.floor]);
  // The picker opens over the foot of your area, which a small phone leaves under the fold: the
  // page scrolls it into view whole.
  useEffect(() => {
    if (!picker) return;
    pickerBox.current?.scrollIntoView({ block: "nearest" });
    pickerBox.current?.querySelector("button")?.focus();
  }, [picker]);
  useDismiss(picker, () => setPicker(false), [pickerBox, emitBtn], emitBtn);
  return html`<div class="floor-controls" data-choice=${tb.choice || ""}>
    <button
      type="button"
      class="floor-btn ${mine.floor ? "on" : ""} ${locked ? "locked" : ""}"
      id="floor-toggle"
      ref=${floorBtn}
      aria-pressed=${mine.floor ? "true" : "false"}
      aria-disabled=${locked ? "true" : "false"}
      onClick=${() => !locked && actions.floor(!mine.floor)}
    >
      <${Emoji} e=${ICON.floor} label="" />
      ${mine.floor ? t("floor.release") : t("floor.take")}
      ${locked && html`<${Lock} key=${tb.floor_ready_at} at=${tb.floor_ready_at} />`}
    </button>
    ${mine.floor &&
    html`<button
        type="button"
        class="emit-btn"
        id="emit-toggle"
        ref=${emitBtn}
        aria-expanded=${picker ? "true" : "false"}
        aria-controls="emit-picker"
        onClick=${() => setPicker(!picker)}
      >
        ${tb.choice ? html`<span class="big-emoji" data-emoji=${tb.choice}><${Emoji} e=${tb.choice} /></span>` : t("floor.choose")}
      </button>
      ${picker &&
      html`<div id="emit-picker" class="popover" ref=${pickerBox}>
        <p>${t("floor.pickerTitle")}</p>
        <${EmojiGrid}
          emojis=${tb.emojis}
          selected=${tb.choice}
          onPick=${show}
          label=${t("floor.pickerTitle")}
          sign=${tb.sign}
          signLabel=${t("floor.pickerSign")}
          hint=${hintsOn(tb)}
        />
      </div>`}`}
    ${asking &&
    html`<${Dialog} title=${t("floor.signTitle")} onClose=${() => answer(false)}>
      <p class="sign-guard" data-sign=${asking}><${Msg} k="floor.signBody" vars=${{ sign: asking }} /></p>
      <div class="row">
        <button type="button" id="confirm-sign" onClick=${() => answer(true)}>${t("floor.signConfirm")}</button>
        <button type="button" id="cancel-sign" onClick=${() => answer(false)}>${t("common.cancel")}</button>
      </div>
    <//>`}
  </div>`;
}

export function History({ game }) {
  const items = game.history;
  return html`<section class="history" aria-label=${t("table.history")}>
    <h2 class="small-title">${t("table.history")}</h2>
    ${items.length === 0
      ? html`<p class="muted">${t("table.noEmissions")}</p>`
      : html`<ol>
          ${items.map(
            (it) => html`<li key=${it.n}>
              <span class="team-dot team-${game.table.seats[it.seat].team}" aria-hidden="true"></span>
              <${Name} seats=${game.table.seats} seat=${it.seat} />
              <span class="big-emoji" data-emoji=${it.emoji}><${Emoji} e=${it.emoji} /></span>
            </li>`,
          )}
        </ol>`}
  </section>`;
}
