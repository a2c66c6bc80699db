// Countdowns against the server clock.
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.js";
import { clock } from "./i18n.js";
import { serverNow } from "./servertime.js";

// A table shows states that end at known times (a cooldown, the floor's lock, a clock's next
// second): a component re-renders when one ends, never on a fixed beat. Re-rendering the hand and
// the floor four or five times a second for the whole round kept a slow phone's main thread so
// busy that its frames stalled (a picker that never held still long enough to be photographed,
// in a test on a loaded machine).

// One re-render once the server's clock has passed `at` (again if the clock's estimate moved).
export function useRerenderAt(at) {
  const [, setN] = useState(0);
  useEffect(() => {
    if (!at || at <= serverNow()) return undefined;
    let id = 0;
    const wait = () => {
      const left = at - serverNow();
      if (left <= 0) setN((n) => n + 1);
      else id = setTimeout(wait, left + 20);
    };
    wait();
    return () => clearTimeout(id);
  }, [at]);
}

// A re-render each time the seconds left before `deadline` change, as `clock` shows them.
export function useSeconds(deadline) {
  const [, setN] = useState(0);
  useEffect(() => {
    if (!deadline) return undefined;
    let id = 0;
    const next = () => {
      const left = deadline - serverNow();
      if (left <= 0) return;
      id = setTimeout(() => {
        setN((n) => n + 1);
        next();
      }, (left % 1000 || 1000) + 5);
    };
    next();
    return () => clearTimeout(id);
  }, [deadline]);
  return serverNow();
}

export function Countdown({ deadline, label }) {
  const now = useSeconds(deadline);
  const left = deadline ? deadline - now : 0;
  return html`<span class="countdown ${left < 10_000 ? "soon" : ""}" role="timer" aria-label=${label}>
    ${clock(left)}
  </span>`;
}

