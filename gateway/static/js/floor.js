// The floor: taking it (and its lock), the emoji shown on it, and the list of emissions.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { Name } from "./names.js";
import { serverNow } from "./servertime.js";
import { useTick } from "./ticking.js";
import { EmojiGrid } from "./panels.js";
import { hintsOn } from "./hints.js";
import { Emoji, ICON } from "./emoji.js";

export function FloorControls({ game, actions }) {
  useTick(250);
  const tb = game.table;
  const mine = tb.seats[game.you.seat];
  const lockLeft = tb.floor_ready_at ? tb.floor_ready_at - serverNow() : 0;
  const locked = lockLeft > 0;
  const [picker, setPicker] = useState(false);
  const floorBtn = useRef(null);
  const emitBtn = useRef(null);
  const pickerBox = useRef(null);
  // Taking the floor is for showing an emoji: the button that does it comes next.
  useEffect(() => {
    if (mine.floor && floorBtn.current && document.activeElement === floorBtn.current) {
      emitBtn.current?.focus();
    }
  }, [mine.floor]);
  useEffect(() => {
    if (picker) pickerBox.current?.querySelector("button")?.focus();
  }, [picker]);
  return html`<div class="floor-controls">
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
      ${locked &&
      html`<span class="lock" style=${`animation-duration:${lockLeft}ms`} key=${tb.floor_ready_at}
        ><span class="visually-hidden">${t("floor.locked")}</span></span
      >`}
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
          onPick=${(e) => {
            actions.emit(e);
            setPicker(false);
            emitBtn.current?.focus();
          }}
          label=${t("floor.pickerTitle")}
          sign=${tb.sign}
          signLabel=${t("floor.pickerSign")}
          hint=${hintsOn(tb)}
        />
      </div>`}`}
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
