// Toasts: short messages that leave by themselves (refusals, results).
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.js";
import { pictured } from "./emoji.js";

const listeners = new Set();
let seq = 0;

export function toast(text, kind = "info") {
  const item = { id: ++seq, text, kind };
  for (const fn of listeners) fn(item);
}

export function Toasts() {
  const [items, setItems] = useState([]);
  useEffect(() => {
    const add = (item) => {
      setItems((xs) => [...xs.slice(-2), item]);
      setTimeout(() => setItems((xs) => xs.filter((x) => x.id !== item.id)), 4500);
    };
    listeners.add(add);
    return () => listeners.delete(add);
  }, []);
  return html`<div class="toasts" aria-hidden="true">
    ${items.map((x) => html`<div key=${x.id} class="toast toast-${x.kind}">${pictured(x.text)}</div>`)}
  </div>`;
}
