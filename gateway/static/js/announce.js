// The ARIA live regions: a polite log for swaps and emissions, an assertive one for calls and
// refusals. Lines are appended (a log announces additions), keeping only the last few.

const KEEP = 4;

export function announce(text, { urgent = false } = {}) {
  const el = document.getElementById(urgent ? "live-urgent" : "live-polite");
  if (!el || !text) return;
  const line = document.createElement("p");
  line.textContent = text;
  el.append(line);
  while (el.childElementCount > KEEP) el.firstElementChild.remove();
}

export function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}
