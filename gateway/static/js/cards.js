// The cards in play: the centre's slots, your hand with its cooldown ring, and dragging a card
// from one to the other.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { Card, cardLabel } from "./names.js";
import { reducedMotion } from "./announce.js";
import { serverNow } from "./servertime.js";
import { useRerenderAt } from "./ticking.js";

export function CenterSlots({ center, selected, onSlot, flash, lastSwap, me, canSwap }) {
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
// `root`: a ref to an element holding the slots.
export function useDrag(onDrop, root) {
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
    root.current?.querySelectorAll(".slot.drop").forEach((s) => s.classList.remove("drop"));
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
    root.current?.querySelectorAll(".slot.drop").forEach((s) => s.classList.remove("drop"));
    d.el.style.visibility = "hidden";
    const under = document.elementFromPoint(e.clientX, e.clientY)?.closest("[data-slot]");
    d.el.style.visibility = "";
    d.el.dataset.dragged = "1"; // swallow the click that follows
    if (under) onDrop(d.id, Number(under.dataset.slot));
  }
  return { onPointerDown, onPointerMove, onPointerUp, onPointerCancel: onPointerUp };
}

// Keyed by its end: the drain's length is the time left when it appears, kept as it was so that a
// later render (with less time left) does not make it jump ahead.
function CooldownRing({ readyAt }) {
  const [left] = useState(() => (readyAt ? readyAt - serverNow() : 0));
  if (left <= 0 || readyAt <= serverNow()) return null;
  return html`<svg class="cooldown-ring" viewBox="0 0 36 36" aria-hidden="true">
    <circle cx="18" cy="18" r="15" pathLength="100" style=${`animation-duration:${left}ms`} />
  </svg>`;
}

export function Hand({ hand, selected, onSelect, drag, readyAt, canSwap }) {
  useRerenderAt(readyAt);
  const cooling = readyAt && readyAt > serverNow();
  return html`<div class="hand-wrap ${cooling ? "cooling" : ""}">
    <div class="hand" role="group" aria-label=${t("table.yourHand")}>
      <span class="ring-slot" aria-hidden="true"><${CooldownRing} key=${readyAt} readyAt=${readyAt} /></span>
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
