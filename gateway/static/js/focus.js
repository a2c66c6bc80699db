// Where focus goes when the element holding it disappears (a panel replaced by the next phase, a
// button gone once used): back to something sensible that the view picks, instead of the page's
// body, where a keyboard or screen-reader user would have to start over from the top.
import { useEffect } from "preact/hooks";

// A press on nothing focusable (the felt, a margin) puts focus on the body on purpose: leave it.
let blurredOnPurpose = false;
const FOCUSABLE = "button, a[href], input, select, textarea, summary, [tabindex]";
document.addEventListener(
  "pointerdown",
  (e) => {
    blurredOnPurpose = !e.target?.closest?.(FOCUSABLE);
  },
  true,
);
document.addEventListener("keydown", () => (blurredOnPurpose = false), true);

// A focused element that a render disabled, hid or made inert counts as lost already: Chromium
// moves focus off it to the body only in a task of its own after the next layout, which may run
// after this render's effects, and no render may follow to rescue it then.
function focusLost() {
  const el = document.activeElement;
  if (!el || el === document.body || !el.isConnected) return true;
  return el.disabled === true || !!el.closest("[inert]") || el.checkVisibility?.() === false;
}

// After each render: if focus was lost, focus what `pick()` returns (an element, or null).
export function useFocusRescue(pick) {
  useEffect(() => {
    if (!focusLost() || blurredOnPurpose) return;
    pick()?.focus();
  });
}

// Whether the player is at the keyboard now: a key pressed since the last touch or click. Written
// on the page as <html data-input="keyboard">, so that the shortcuts' number badges and the ring
// of focus that the page moves by itself (after a reload, a panel replaced) show only to someone
// using keys; on a touch phone they read as a stray selection. Typing into a text field, or a
// virtual keyboard's keys (reported as "Unidentified" or "Process"), says nothing about it.
function noteInput(keys) {
  const mode = keys ? "keyboard" : "pointer";
  if (document.documentElement.dataset.input !== mode) document.documentElement.dataset.input = mode;
}

// A key that says a keyboard is in use: not a virtual keyboard's typing into a text field (a
// phone's keyboard sends real key names there too), nor a shortcut of the browser's.
function keyboardKey(e) {
  if (e.key === "Unidentified" || e.key === "Process" || e.ctrlKey || e.metaKey || e.altKey) return false;
  return e.key === "Tab" || !e.target?.closest?.("input, textarea, select");
}

// Whether the player has a keyboard at all: a fine main pointer (a mouse, a trackpad) usually
// comes with one, and such a key pressed proves it (a tablet with a keyboard case). A phone's
// name typed on its own keyboard proves nothing: the keys' sentence ("Keys 1 to 4…") stays off.
let keyPressed = false;
document.addEventListener("pointerdown", () => noteInput(false), true);
document.addEventListener(
  "keydown",
  (e) => {
    if (!keyboardKey(e)) return;
    keyPressed = true;
    noteInput(true);
  },
  true,
);
export function hasKeyboard() {
  return keyPressed || window.matchMedia("(pointer: fine)").matches;
}
