// Toasts: short messages that leave by themselves (refusals, results). They drop in at the top of
// the screen, under whatever of these is there: the header, a table's status bar (its round,
// clock and scores), a vote that waits for an answer, and a round's result (its title and text);
// never over them. At the bottom they would cover Quatro! and Contre!.
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
    const place = () => {
      if (box.current) box.current.style.insetBlockStart = `${clearTop()}px`;
      frame = requestAnimationFrame(place);
    };
    place();
    return () => cancelAnimationFrame(frame);
  }, [items.length > 0]);
  return html`<div class="toasts" aria-hidden="true" ref=${box}>
    ${items.map((x) => html`<div key=${x.id} class="toast toast-${x.kind}">${pictured(x.text)}</div>`)}
  </div>`;
}
