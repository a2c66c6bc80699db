// Toasts: short messages that leave by themselves (refusals, results). They drop in at the top of
// the screen, under whatever of these is there: the header, a table's status bar (its round,
// clock and scores), a vote that waits for an answer, and a round's result (its title and text);
// never over them. At the bottom they would cover Quatro! and Contre!. During play the ring's
// seats are where a player watches for the sign, and the top of the screen lies over the seats
// across the ring: a toast then shows inside the ring, under the centre's cards and between the
// seats beside it, whenever that band is on screen and wide enough.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { pictured } from "./emoji.js";

const listeners = new Set();
let seq = 0;

export function toast(text, kind = "info") {
  const item = { id: ++seq, text, kind };
  for (const fn of listeners) fn(item);
}

const KEEP_CLEAR = ".topbar, .statusbar, .banner.vote.asking, .reveal h2, .reveal-text, .reveal .winners";
const GAP = 6;

// The screen's y under the lowest of KEEP_CLEAR that shows in the top half of the screen (one
// lower down is not in a toast's way).
function clearTop() {
  let top = 0;
  for (const el of document.querySelectorAll(KEEP_CLEAR)) {
    const r = el.getBoundingClientRect();
    if (r.height > 0 && r.bottom > 0 && r.top < innerHeight / 2) top = Math.max(top, r.bottom);
  }
  return Math.round(top + GAP);
}

// Below ROOMY the band is a crowded ring's (eight seats on a phone): its toast is set smaller,
// so that it stays between the seats rather than over those across the ring.
const NARROWEST = 120;
const ROOMY = 240;
const LOWEST = 48;

// The band inside the ring under the centre's cards that no seat (nor its emission's bubble)
// reaches, as {top, left, right}; null when there is none to use (no round in play, the band off
// screen or too small).
function ringBand(top) {
  const ring = document.querySelector(".ring");
  const slots = [...document.querySelectorAll(".ring .slot")].map((el) => el.getBoundingClientRect());
  if (!ring || !slots.length) return null;
  const box = ring.getBoundingClientRect();
  const band = { top: Math.max(...slots.map((r) => r.bottom)) + GAP, left: box.left + GAP, right: box.right - GAP };
  const bottom = Math.min(box.bottom, innerHeight);
  if (band.top < top || bottom - band.top < LOWEST) return null;
  const middle = (box.left + box.right) / 2;
  for (const el of document.querySelectorAll(".ring .seat, .ring .bubble")) {
    const r = el.getBoundingClientRect();
    if (r.height === 0 || r.bottom <= band.top || r.top >= bottom) continue;
    if ((r.left + r.right) / 2 < middle) band.left = Math.max(band.left, r.right + GAP);
    else band.right = Math.min(band.right, r.left - GAP);
  }
  return band.right - band.left < NARROWEST ? null : band;
}

// Called every frame while a toast shows: it writes only what changed, so that a still page is
// not restyled each frame.
function place(el) {
  const top = clearTop();
  const band = ringBand(top);
  const at = {
    insetBlockStart: `${band ? band.top : top}px`,
    // Physical sides: the band is measured on the screen, whichever way the page reads.
    left: band ? `${band.left}px` : "0px",
    right: band ? `${innerWidth - band.right}px` : "0px",
  };
  for (const [k, v] of Object.entries(at)) if (el.style[k] !== v) el.style[k] = v;
  const where = band ? "ring" : "top";
  if (el.dataset.where !== where) el.dataset.where = where;
  el.classList.toggle("narrow", !!band && band.right - band.left < ROOMY);
}

export function Toasts() {
  const [items, setItems] = useState([]);
  const box = useRef(null);
  useEffect(() => {
    const add = (item) => {
      setItems((xs) => [...xs.slice(-2), item]);
      setTimeout(() => setItems((xs) => xs.filter((x) => x.id !== item.id)), 4500);
    };
    listeners.add(add);
    return () => listeners.delete(add);
  }, []);
  // While a toast shows, it follows what it must keep clear of (the page scrolls, a reveal
  // comes in): checked every frame, for its few seconds only.
  useLayoutEffect(() => {
    if (!items.length) return undefined;
    let frame = 0;
    const follow = () => {
      if (box.current) place(box.current);
      frame = requestAnimationFrame(follow);
    };
    follow();
    return () => cancelAnimationFrame(frame);
  }, [items.length > 0]);
  return html`<div class="toasts" aria-hidden="true" ref=${box}>
    ${items.map((x) => html`<div key=${x.id} class="toast toast-${x.kind}">${pictured(x.text)}</div>`)}
  </div>`;
}
