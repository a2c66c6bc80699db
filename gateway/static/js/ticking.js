// Countdowns against the server clock.
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.js";
import { clock } from "./i18n.js";
import { serverNow } from "./servertime.js";

export function useTick(ms = 250) {
  const [, setN] = useState(0);
  useEffect(() => {
    const id = setInterval(() => setN((n) => n + 1), ms);
    return () => clearInterval(id);
  }, [ms]);
  return serverNow();
}

export function Countdown({ deadline, label }) {
  const now = useTick(250);
  const left = deadline ? deadline - now : 0;
  return html`<span class="countdown ${left < 10_000 ? "soon" : ""}" role="timer" aria-label=${label}>
    ${clock(left)}
  </span>`;
}

