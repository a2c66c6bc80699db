// The table's pop-ups (the emoji picker, the host's watchers switch, the dialogs of the calls and
// of the sign) close as players expect: on Escape, focus going back to what opened them, and on
// a press anywhere outside them. Where they open is the stylesheets' concern, and the rule is one:
// never over the ring, whose seats are where a player watches for the sign — over the player's
// own area (your-area.css, panels.css) or in the flow of the bar that holds them (watchers.css).
import { useLayoutEffect, useRef } from "preact/hooks";

// While `open`: Escape, or a press outside every element of `inside` (refs), calls `close`;
// Escape then focuses `opener` (a ref). A press outside still does what it would have done: a
// dialog that must swallow it draws its own catcher (panels.js, Dialog).
// A layout effect, not an effect: it runs before the browser paints the pop-up, so that a key
// pressed the moment it shows already closes it (an effect waits for the paint, and an Escape
// in between was lost: the pop-up then stayed open).
export function useDismiss(open, close, inside, opener = null) {
  const latest = useRef(close);
  latest.current = close;
  useLayoutEffect(() => {
    if (!open) return undefined;
    const onKey = (e) => {
      if (e.key !== "Escape") return;
      latest.current();
      opener?.current?.focus();
    };
    const onPress = (e) => {
      if (!inside.some((ref) => ref.current?.contains(e.target))) latest.current();
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("pointerdown", onPress, true);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("pointerdown", onPress, true);
    };
  }, [open]);
}

// A <details> opens itself before its toggle event tells the state (and so before useDismiss
// listens): an Escape pressed in between must close it too. Its onKeyDown handler.
export function escapeDetails(setOpen, opener) {
  return (e) => {
    if (e.key !== "Escape" || !e.currentTarget.open) return;
    e.currentTarget.open = false;
    setOpen(false);
    opener.current?.focus();
  };
}
