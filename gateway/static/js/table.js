// The table during a match: the status bar, the seats ring around the centre, your hand and
// actions, the panels of each phase, and joining late; the pieces live in the modules below.
// The ring's seats do not mirror in Arabic: see seats.js.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { shown } from "./state.js";
import { Name, teamLabel } from "./names.js";
import { hasKeyboard, useFocusRescue } from "./focus.js";
import { SigningPanel, VoteBanner, RevealPanel } from "./panels.js";
import { HintLine } from "./hints.js";
import { StatusBar } from "./statusbar.js";
import { SeatView, seatPosition } from "./seats.js";
import { CenterSlots, Hand, useDrag } from "./cards.js";
import { FloorControls, History } from "./floor.js";
import { CallButtons } from "./calls.js";
import { Emoji } from "./emoji.js";
import { ClaimRequests, LateJoin } from "./latejoin.js";
import { Coach } from "./tutorial.js";
import { BotLevelChip } from "./settings.js";

// `controls`, for a replay: shown in place of a watcher's panel (or under your hand), and the
// table plays for nobody (status "replay" is never "online"): in every view it is read-only,
// with no signing grid, no "I'm ready" and no live tips, even in a player's own seat's view.
export function TableView({ game, actions, flash, status, onStopWatching, controls = null }) {
  const tb = game.table;
  const watching = Boolean(game.you.watching);
  // A watcher sits nowhere: the ring shows every seat, seen from seat 0's side.
  const me = watching ? null : game.you.seat;
  const n = tb.players;
  const [selected, setSelected] = useState(null);
  const { hand, center } = shown(game);
  // A dead link (status not "online") holds frames without refusing them: play waits for it.
  const live = status === "online";
  const canSwap = !watching && live && tb.phase === "playing" && game.pending.length === 0;
  // Focus moves between elements the children draw: looked up within this page only.
  const page = useRef(null);
  const find = (selector) => page.current?.querySelector(selector) ?? null;
  const handCards = () => page.current?.querySelectorAll(".hand-card") ?? [];
  // After a swap by keyboard, focus goes to the card that came into the hand (same place).
  const refocus = useRef(null);
  function swapNow(card, slot) {
    refocus.current = hand.findIndex((c) => c.id === card);
    setSelected(null);
    actions.swap(card, slot);
  }
  const drag = useDrag((card, slot) => {
    setSelected(null);
    actions.swap(card, slot);
  }, page);
  useEffect(() => {
    if (selected && !hand.some((c) => c.id === selected)) setSelected(null);
  }, [hand]);
  useLayoutEffect(() => {
    if (refocus.current === null) return;
    handCards()[refocus.current]?.focus();
    refocus.current = null;
  }, [hand]);
  useFocusRescue(() =>
    find(".hand-card[aria-pressed='true']") ||
    find(".hand-card") ||
    find("#start-now, #play-again, #reveal-title") ||
    find("#replay-play"),
  );

  // Shortcuts: 1–4 choose a card of the hand (in reading order), then 1–4 a centre slot (left to
  // right): a swap in two key presses. Escape lets go of the chosen card.
  const keys = useRef(null);
  keys.current = { hand, selected, ready: canSwap, swapNow };
  useEffect(() => {
    const onKey = (e) => {
      if (e.key === "Escape") {
        setSelected(null);
        return;
      }
      if (!/^[1-4]$/.test(e.key) || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.target.closest?.("input, select, textarea, .dialog, .popover, .emoji-grid")) return;
      const k = keys.current;
      const n = Number(e.key) - 1;
      if (!k.ready || find(".hand-wrap.cooling")) return;
      e.preventDefault();
      if (k.selected && k.hand.some((c) => c.id === k.selected)) {
        k.swapNow(k.selected, n);
      } else if (k.hand[n]) {
        setSelected(k.hand[n].id);
        handCards()[n]?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  function onSelect(id, byKeyboard) {
    const next = selected === id ? null : id;
    setSelected(next);
    // Chosen with Enter or Space: on to the centre, where the arrows and Enter finish the swap.
    if (next && byKeyboard) requestAnimationFrame(() => find(".slot")?.focus());
  }

  function onSlot(i) {
    if (!selected) {
      // Slot first, then a card works too: remember the slot by focusing the hand.
      find(".hand-card")?.focus();
      return;
    }
    swapNow(selected, i);
  }

  const pulses = {};
  for (const it of [...game.history].reverse()) pulses[it.seat] = it.n;
  const others = tb.seats.map((s) => s.seat).filter((s) => s !== me);
  const myRow = watching ? null : tb.seats[me];
  const revealing = (tb.phase === "pause" || tb.phase === "over") && tb.last_reveal;

  return html`<div
    class="table-page players-${n} ${watching ? "watching" : ""}"
    ref=${page}
    data-phase=${tb.phase}
    data-seat=${watching ? "watch" : me}
  >
    <${StatusBar} game=${game} status=${status} />
    ${tb.tutorial && !watching && !controls && html`<${Coach} game=${game} />`}
    ${tb.vote && html`<${VoteBanner} game=${game} actions=${actions} />`}
    ${revealing && html`<${RevealPanel} game=${game} actions=${actions} />`}
    ${tb.phase === "signing" &&
    (watching || controls
      ? html`<p class="panel center-text" role="status">${t("watch.signing")}</p>`
      : html`<${SigningPanel} game=${game} actions=${actions} />`)}
    ${!revealing &&
    html`<div class="ring" role="region" aria-label=${t("table.ring")}>
      <div class="felt" aria-hidden="true"></div>
      <${BotLevelChip} table=${tb} isHost=${game.you.host === true} readOnly=${!!controls} />
      ${others.map(
        (s) => html`<${SeatView}
          key=${s}
          game=${game}
          seat=${s}
          pos=${seatPosition(s, me ?? 0, n)}
          pulse=${pulses[s]}
        />`,
      )}
      <div class="middle">
        ${tb.phase === "playing" &&
        html`<${CenterSlots}
          center=${center}
          selected=${selected}
          onSlot=${onSlot}
          flash=${flash}
          lastSwap=${game.lastSwap}
          me=${me}
          canSwap=${canSwap}
        />`}
      </div>
    </div>`}
    ${watching &&
    !controls &&
    html`<section class="me watcher" aria-labelledby="watch-title">
      <h2 id="watch-title">${t("watch.title")}</h2>
      <p class="hint">${t("watch.lead")}</p>
      <${LateJoin} game=${game} actions=${actions} />
      <button type="button" id="stop-watching" onClick=${onStopWatching}>${t("watch.stop")}</button>
    </section>`}
    ${!watching && (tb.claims ?? []).length > 0 && html`<${ClaimRequests} game=${game} actions=${actions} />`}
    ${!watching &&
    html`<section
      class="me team-${myRow.team}"
      aria-label=${t("table.you")}
      data-seat=${me}
      data-shows=${myRow.floor && myRow.emoji ? myRow.emoji : ""}
    >
      <div class="me-head">
        ${myRow.emoji &&
        html`<span class="bubble pulse" key=${pulses[me]} data-emoji=${myRow.emoji}
          ><${Emoji} e=${myRow.emoji} label="" /></span
        >`}
        <span class="team-dot" aria-hidden="true"></span>
        <${Name} seats=${tb.seats} seat=${me} />
        <span class="tag">${teamLabel(myRow.team)}</span>
        ${tb.sign &&
        html`<span class="our-sign" data-sign=${tb.sign}>
          ${t("sign.ours")} <span class="big-emoji"><${Emoji} e=${tb.sign} /></span>
        </span>`}
      </div>
      ${!controls && html`<${HintLine} table=${tb} seat=${me} hand=${hand} />`}
      ${tb.phase === "playing" &&
      html`<${Hand}
          hand=${hand}
          selected=${selected}
          onSelect=${onSelect}
          drag=${drag}
          readyAt=${tb.swap_ready_at}
          canSwap=${canSwap}
        />
        ${!controls &&
        html`<p class="hint">
            ${selected ? t("table.pickSlot") : t("table.pickCard")}
            ${hasKeyboard() && html` ${selected ? t("table.pickSlotKeys") : t("table.pickCardKeys")}`}
          </p>
          <fieldset class="actions" disabled=${!live} data-live=${live ? "yes" : "no"}>
            <legend class="visually-hidden">${t("table.you")}</legend>
            <${FloorControls} game=${game} actions=${actions} hand=${hand} />
            <${CallButtons} game=${game} actions=${actions} hand=${hand} />
          </fieldset>`}`}
    </section>`}
    ${controls}
    ${(tb.phase === "playing" || game.history.length > 0) && html`<${History} game=${game} />`}
  </div>`;
}
