// The table during a match: status bar, the seats around the centre, your hand and actions.
//
// Seats do NOT mirror in Arabic. The ring is a picture of chairs around a real table: seat
// numbers run the same way for every player, so "the player after me" is the same person on a
// French and an Arabic screen, and swaps fly from the same side for both. Text inside each seat,
// the bars and the panels do follow the page direction (logical CSS properties), so only the
// geometry stays put; that is why the ring uses physical `left`/`top`.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { clock, listOf, listText, t } from "./i18n.js";
import { hasCarre, partnerOf, shown, teamSeats } from "./state.js";
import { Card, Name, cardLabel, seatName, teamLabel } from "./names.js";
import { reducedMotion } from "./announce.js";
import { serverNow } from "./servertime.js";
import { Countdown, useTick } from "./ticking.js";
import { hasKeyboard, useFocusRescue } from "./focus.js";
import { SigningPanel, VoteBanner, RevealPanel, Dialog, EmojiGrid } from "./panels.js";
import { HintLine, hintsOn } from "./hints.js";
import { allowWatchers } from "./settings.js";

function StatusBar({ game, status }) {
  const tb = game.table;
  const teams = tb.players / 2;
  const clockLabel = {
    signing: t("status.signingClock"),
    playing: t("status.roundClock"),
    pause: t("status.pauseClock"),
  }[tb.phase];
  const floors = tb.seats.filter((s) => s.floor).map((s) => s.seat);
  return html`<div class="statusbar" aria-label=${t("status.bar")}>
    <span class="round-no">${t("status.round", { n: tb.round })}</span>
    ${clockLabel &&
    html`<span class="clock" data-phase=${tb.phase}>
      <span class="clock-label">${clockLabel}</span>
      <${Countdown} deadline=${tb.deadline} label=${clockLabel} />
    </span>`}
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
        ? html`<span aria-hidden="true">🎙️</span> ${listOf(
              floors.map((s) => html`<${Name} seats=${tb.seats} seat=${s} />`),
            )}`
        : html`<span class="muted">${t("status.noFloor")}</span>`}
    </span>
    ${status !== "replay" && html`<${WatchCount} game=${game} />`}
    ${status === "replay"
      ? html`<span class="net net-replay tag">${t("replay.tag")}</span>`
      : html`<span class="net net-${status}" role="status">
          <span class="dot" aria-hidden="true"></span>${t(`conn.${status === "online" ? "online" : "offline"}`)}
        </span>`}
  </div>`;
}

// How many watch without a seat. The host can close the table to them from here, mid-match too.
function WatchCount({ game }) {
  const tb = game.table;
  const n = tb.watching ?? 0;
  const allowed = tb.settings?.watchers !== false;
  const label = allowed ? t("watch.count", { n }) : t("watch.closedShort");
  if (!game.you.host || game.you.watching) {
    if (!n) return null;
    return html`<span class="watch-count" data-count=${n} aria-label=${label} title=${label}>
      <span aria-hidden="true">👁 ${n}</span>
    </span>`;
  }
  return html`<details class="watch-count watch-menu" data-count=${n} data-open=${allowed ? "yes" : "no"}>
    <summary aria-label=${label} title=${label}>
      <span aria-hidden="true">👁 ${allowed ? n : "⊘"}</span>
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

// Where seat `s` sits on screen, relative to me at the bottom; partner straight across.
function seatPosition(s, me, n) {
  const r = (s - me + n) % n;
  const angle = Math.PI / 2 + (r * 2 * Math.PI) / n;
  return { left: 50 + 42 * Math.cos(angle), top: 50 + 40 * Math.sin(angle) };
}

// A seat writes its team's number (the dot) and its seat number beside the name. On a phone a
// long name is cut; the seat takes focus (a tap or Tab) to show it whole, and its accessible name
// always holds it.
function SeatView({ game, seat, pos, pulse }) {
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
    html`<span class="bubble ${pulse ? "pulse" : ""}" key=${pulse} aria-hidden="true"
      >${row.emoji}</span
    >`}
    <div class="seat-head">
      <span class="conn-dot" aria-hidden="true"></span>
      <span class="team-dot" aria-hidden="true"></span>
      <${Name} seats=${tb.seats} seat=${seat} />
    </div>
    <div class="seat-tags" aria-hidden="true">
      <span class="seat-number">${t("seat.short", { n: seat + 1 })}</span>
      ${row.kind === "bot" && html`<span class="tag bot-tag">🤖</span>`}
      ${partner && html`<span class="tag partner-tag">${t("seat.partner")}</span>`}
      ${row.floor && html`<span class="tag floor-tag">🎙️</span>`}
      ${tb.phase === "signing" && row.ready && html`<span class="tag">✓</span>`}
      ${!row.connected && html`<span class="tag off">${t("seat.offline")}</span>`}
    </div>
    <div class="backs" aria-hidden="true">
      ${Array.from({ length: handCount }, () => html`<span class="back"></span>`)}
    </div>
  </div>`;
}

function CenterSlots({ center, selected, onSlot, flash, lastSwap, me, canSwap }) {
  const ref = useRef(null);
  // The centre always reads left to right (see .center in css/table.css), in Arabic too.
  function onKeyDown(e) {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (!step) return;
    const slots = [...e.currentTarget.querySelectorAll(".slot")];
    const i = slots.indexOf(document.activeElement);
    if (i < 0) return;
    slots[(i + step + slots.length) % slots.length].focus();
    e.preventDefault();
  }
  // Others' swaps fly in from their seat.
  useLayoutEffect(() => {
    if (!lastSwap || lastSwap.seat === me || reducedMotion()) return;
    const root = ref.current?.closest(".ring");
    const slotEl = ref.current?.querySelector(`[data-slot="${lastSwap.slot}"] .card`);
    const seatEl = root?.querySelector(`.seat[data-seat="${lastSwap.seat}"]`);
    if (!slotEl || !seatEl || !slotEl.animate) return;
    const a = seatEl.getBoundingClientRect();
    const b = slotEl.getBoundingClientRect();
    const dx = a.left + a.width / 2 - (b.left + b.width / 2);
    const dy = a.top + a.height / 2 - (b.top + b.height / 2);
    slotEl.animate(
      [
        { transform: `translate(${dx}px, ${dy}px) scale(0.6)`, opacity: 0.4 },
        { transform: "none", opacity: 1 },
      ],
      { duration: 380, easing: "cubic-bezier(.2,.7,.3,1)" },
    );
  }, [lastSwap?.n]);
  return html`<div
    class="center"
    ref=${ref}
    role="group"
    aria-label=${t("table.center")}
    onKeyDown=${onKeyDown}
  >
    ${center.map(
      (card, i) => html`<button
        type="button"
        class="slot ${flash && flash.slot === i ? "stale" : ""} ${selected ? "armed" : ""}"
        key=${`${i}-${flash && flash.slot === i ? flash.n : 0}`}
        data-slot=${i}
        tabindex=${selected ? 0 : -1}
        disabled=${!canSwap}
        aria-label=${t(selected ? "table.slotSwap" : "table.slot", {
          n: i + 1,
          card: cardLabel(card),
        })}
        onClick=${() => onSlot(i)}
      >
        <${Card} card=${card} />
        <span class="key-hint" aria-hidden="true">${i + 1}</span>
      </button>`,
    )}
  </div>`;
}

// Pointer drag from the hand to a slot; a short press without movement stays a tap (click).
function useDrag(onDrop) {
  const drag = useRef(null);
  function onPointerDown(e, cardId) {
    if (e.button !== 0 || e.currentTarget.getAttribute("aria-disabled") === "true") return;
    drag.current = { id: cardId, x: e.clientX, y: e.clientY, el: e.currentTarget, moved: false };
    e.currentTarget.setPointerCapture?.(e.pointerId);
  }
  function onPointerMove(e) {
    const d = drag.current;
    if (!d) return;
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 8) return;
    d.moved = true;
    d.el.classList.add("dragging");
    d.el.style.transform = `translate(${dx}px, ${dy}px)`;
    document.querySelectorAll(".slot.drop").forEach((s) => s.classList.remove("drop"));
    d.el.style.visibility = "hidden";
    const under = document.elementFromPoint(e.clientX, e.clientY)?.closest("[data-slot]");
    d.el.style.visibility = "";
    under?.classList.add("drop");
  }
  function onPointerUp(e) {
    const d = drag.current;
    drag.current = null;
    if (!d || !d.moved) return;
    d.el.classList.remove("dragging");
    d.el.style.transform = "";
    document.querySelectorAll(".slot.drop").forEach((s) => s.classList.remove("drop"));
    d.el.style.visibility = "hidden";
    const under = document.elementFromPoint(e.clientX, e.clientY)?.closest("[data-slot]");
    d.el.style.visibility = "";
    d.el.dataset.dragged = "1"; // swallow the click that follows
    if (under) onDrop(d.id, Number(under.dataset.slot));
  }
  return { onPointerDown, onPointerMove, onPointerUp, onPointerCancel: onPointerUp };
}

function CooldownRing({ readyAt }) {
  const now = serverNow();
  const left = readyAt ? readyAt - now : 0;
  if (left <= 0) return null;
  return html`<svg class="cooldown-ring" viewBox="0 0 36 36" aria-hidden="true" key=${readyAt}>
    <circle cx="18" cy="18" r="15" pathLength="100" style=${`animation-duration:${left}ms`} />
  </svg>`;
}

function Hand({ hand, selected, onSelect, drag, readyAt, canSwap }) {
  useTick(200);
  const cooling = readyAt && readyAt > serverNow();
  return html`<div class="hand-wrap ${cooling ? "cooling" : ""}">
    <div class="hand" role="group" aria-label=${t("table.yourHand")}>
      <span class="ring-slot" aria-hidden="true"><${CooldownRing} readyAt=${readyAt} /></span>
      ${hand.map(
        (card, i) => html`<button
          type="button"
          class="hand-card ${selected === card.id ? "selected" : ""}"
          key=${card.id}
          data-card-id=${card.id}
          data-rank=${card.rank}
          aria-pressed=${selected === card.id ? "true" : "false"}
          aria-disabled=${!canSwap || cooling ? "true" : "false"}
          aria-keyshortcuts=${String(i + 1)}
          onPointerDown=${(e) => drag.onPointerDown(e, card.id)}
          onPointerMove=${drag.onPointerMove}
          onPointerUp=${drag.onPointerUp}
          onPointerCancel=${drag.onPointerCancel}
          onClick=${(e) => {
            if (e.currentTarget.dataset.dragged) {
              delete e.currentTarget.dataset.dragged;
              return;
            }
            if (!canSwap || cooling) return;
            // detail 0: pressed with Enter or Space, so the centre takes focus next.
            onSelect(card.id, e.detail === 0);
          }}
        >
          <${Card} card=${card} />
          <span class="key-hint" aria-hidden="true">${i + 1}</span>
        </button>`,
      )}
      <span class="ring-slot" aria-hidden="true"></span>
    </div>
    <span class="cooling-text" role="status">${cooling ? t("table.cooldown") : ""}</span>
  </div>`;
}

function FloorControls({ game, actions }) {
  useTick(250);
  const tb = game.table;
  const mine = tb.seats[game.you.seat];
  const lockLeft = tb.floor_ready_at ? tb.floor_ready_at - serverNow() : 0;
  const locked = lockLeft > 0;
  const [picker, setPicker] = useState(false);
  // Taking the floor is for showing an emoji: the button that does it comes next.
  useEffect(() => {
    if (mine.floor && document.activeElement?.id === "floor-toggle") {
      document.getElementById("emit-toggle")?.focus();
    }
  }, [mine.floor]);
  useEffect(() => {
    if (picker) document.querySelector("#emit-picker button")?.focus();
  }, [picker]);
  return html`<div class="floor-controls">
    <button
      type="button"
      class="floor-btn ${mine.floor ? "on" : ""} ${locked ? "locked" : ""}"
      id="floor-toggle"
      aria-pressed=${mine.floor ? "true" : "false"}
      aria-disabled=${locked ? "true" : "false"}
      onClick=${() => !locked && actions.floor(!mine.floor)}
    >
      <span aria-hidden="true">🎙️</span>
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
        aria-expanded=${picker ? "true" : "false"}
        aria-controls="emit-picker"
        onClick=${() => setPicker(!picker)}
      >
        ${tb.choice ? html`<span class="big-emoji">${tb.choice}</span>` : t("floor.choose")}
      </button>
      ${picker &&
      html`<div id="emit-picker" class="popover">
        <p>${t("floor.pickerTitle")}</p>
        <${EmojiGrid}
          emojis=${tb.emojis}
          selected=${tb.choice}
          onPick=${(e) => {
            actions.emit(e);
            setPicker(false);
            document.getElementById("emit-toggle")?.focus();
          }}
          label=${t("floor.pickerTitle")}
          sign=${tb.sign}
          signLabel=${t("floor.pickerSign")}
          hint=${hintsOn(tb)}
        />
      </div>`}`}
  </div>`;
}

function History({ game }) {
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
              <span class="big-emoji">${it.emoji}</span>
            </li>`,
          )}
        </ol>`}
  </section>`;
}

function CallButtons({ game, actions, hand }) {
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
      <p>${t("r16.body")}</p>
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

// `controls`, for a replay: shown in place of a watcher's panel (or under your hand), and the
// table plays for nobody (status "replay" is never "online").
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
  });
  useEffect(() => {
    if (selected && !hand.some((c) => c.id === selected)) setSelected(null);
  }, [hand]);
  useLayoutEffect(() => {
    if (refocus.current === null) return;
    const cards = document.querySelectorAll(".hand-card");
    cards[refocus.current]?.focus();
    refocus.current = null;
  }, [hand]);
  useFocusRescue(() =>
    document.querySelector(".hand-card[aria-pressed='true']") ||
    document.querySelector(".hand-card") ||
    document.querySelector("#start-now, #play-again, #reveal-title") ||
    document.querySelector("#replay-play"),
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
      if (!k.ready || document.querySelector(".hand-wrap.cooling")) return;
      e.preventDefault();
      if (k.selected && k.hand.some((c) => c.id === k.selected)) {
        k.swapNow(k.selected, n);
      } else if (k.hand[n]) {
        setSelected(k.hand[n].id);
        document.querySelectorAll(".hand-card")[n]?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  function onSelect(id, byKeyboard) {
    const next = selected === id ? null : id;
    setSelected(next);
    // Chosen with Enter or Space: on to the centre, where the arrows and Enter finish the swap.
    if (next && byKeyboard) requestAnimationFrame(() => document.querySelector(".slot")?.focus());
  }

  function onSlot(i) {
    if (!selected) {
      // Slot first, then a card works too: remember the slot by focusing the hand.
      document.querySelector(".hand-card")?.focus();
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
    data-phase=${tb.phase}
    data-seat=${watching ? "watch" : me}
  >
    <${StatusBar} game=${game} status=${status} />
    ${tb.vote && html`<${VoteBanner} game=${game} actions=${actions} />`}
    ${revealing && html`<${RevealPanel} game=${game} actions=${actions} />`}
    ${tb.phase === "signing" &&
    (watching
      ? html`<p class="panel center-text" role="status">${t("watch.signing")}</p>`
      : html`<${SigningPanel} game=${game} actions=${actions} />`)}
    ${!revealing &&
    html`<div class="ring" role="region" aria-label=${t("table.ring")}>
      <div class="felt" aria-hidden="true"></div>
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
    html`<section class="me team-${myRow.team}" aria-label=${t("table.you")} data-seat=${me}>
      <div class="me-head">
        ${myRow.emoji &&
        html`<span class="bubble pulse" key=${pulses[me]} aria-hidden="true">${myRow.emoji}</span>`}
        <span class="team-dot" aria-hidden="true"></span>
        <${Name} seats=${tb.seats} seat=${me} />
        <span class="tag">${teamLabel(myRow.team)}</span>
        ${tb.sign &&
        html`<span class="our-sign" data-sign=${tb.sign}>
          ${t("sign.ours")} <span class="big-emoji">${tb.sign}</span>
        </span>`}
      </div>
      <${HintLine} table=${tb} seat=${me} hand=${hand} />
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
            <${FloorControls} game=${game} actions=${actions} />
            <${CallButtons} game=${game} actions=${actions} hand=${hand} />
          </fieldset>`}`}
    </section>`}
    ${controls}
    ${(tb.phase === "playing" || game.history.length > 0) && html`<${History} game=${game} />`}
  </div>`;
}

// Joining late, for a watcher: one button per bot seat ("Take seat N"), then the request's state
// until the next round's signing makes the seat theirs (the socket then closes 4411 and the
// page says hello again, seated).
function LateJoin({ game, actions }) {
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
function ClaimRequests({ game, actions }) {
  const tb = game.table;
  const isHost = game.you.seat === 0;
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
