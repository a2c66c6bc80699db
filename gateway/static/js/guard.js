// The second tap before a call that can only lose (issue 46: "no point lost to a slip"). A
// Quatro! with nothing on the partner's floor, or a Contre! on a team that cannot hold a carré
// by what everyone saw (js/hints.js, after engine/hints.py, says which), does not go on the
// first tap: the button turns into "Tap again to call …" for a few seconds, and only a second
// tap on it sends the call. No dialog: the right call still goes on one tap, and a player who
// meant it taps twice where they already are. The switch that turns this off is this device's
// alone (`localStorage`), on the profile page: `GuardSwitch`.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { announce } from "./announce.js";

const STORE_KEY = "quatro.guard";
// How long a first tap waits for the second. The rules' clocks are scaled by the table's
// time_scale (a test hook), and so is this one, so that a test can watch it run out; never below
// MIN_ARMED_MS, which leaves a second tap time to come after SETTLE_MS at the fastest scale.
const ARMED_MS = 4000;
const MIN_ARMED_MS = 1500;
// A second tap sooner than this is the same slip bouncing (or a held Enter repeating): ignored.
const SETTLE_MS = 350;

export function guardOn() {
  return localStorage.getItem(STORE_KEY) !== "off";
}

export function setGuard(on) {
  if (on) localStorage.removeItem(STORE_KEY);
  else localStorage.setItem(STORE_KEY, "off");
}

// `armed`: which call waits for its second tap ("quatro", "contre", "team-2"), with `settled`
// once a second tap counts. `press(what, needsConfirm, send)` is each button's tap.
// A new phase or round forgets a first tap.
export function useSecondTap(timeScale, phase, round) {
  const [armed, setArmed] = useState(null);
  const timers = useRef([]);
  const clear = () => {
    for (const id of timers.current) clearTimeout(id);
    timers.current = [];
  };
  const disarm = () => {
    clear();
    setArmed(null);
  };
  useEffect(() => disarm, []);
  useEffect(() => disarm(), [phase, round]);
  function press(what, needsConfirm, send) {
    if (!needsConfirm || !guardOn()) {
      disarm();
      send();
      return;
    }
    if (armed?.what === what) {
      if (!armed.settled) return;
      disarm();
      send();
      return;
    }
    clear();
    const lasts = Math.max(MIN_ARMED_MS, ARMED_MS * (timeScale || 1));
    setArmed({ what, settled: false, lasts, n: Date.now() });
    timers.current = [
      setTimeout(() => setArmed((a) => (a?.what === what ? { ...a, settled: true } : a)), SETTLE_MS),
      setTimeout(() => setArmed((a) => (a?.what === what ? null : a)), lasts),
    ];
    announce(t(what === "quatro" ? "guard.saidQuatro" : "guard.saidContre"), { urgent: true });
  }
  return { armed, press, disarm };
}

// What an armed button says above its call's name: "Tap again to call" (or "Press again…" for
// someone at the keyboard: js/focus.js writes <html data-input>), with a bar running out.
export function Again({ armed }) {
  const keys = document.documentElement.dataset.input === "keyboard";
  return html`<span class="again">${t(keys ? "guard.pressAgain" : "guard.tapAgain")}</span
    ><span class="guard-bar" aria-hidden="true" key=${armed.n} style=${`animation-duration:${armed.lasts}ms`}></span>`;
}

// The button's `data-guard` while it waits for its second tap: "settling", then "armed" once a
// second tap counts; "" otherwise.
export function guardState(armed, what) {
  if (armed?.what !== what) return "";
  return armed.settled ? "armed" : "settling";
}

// The one place to turn the second tap off (and on again), for this device.
export function GuardSwitch() {
  const [on, setOn] = useState(guardOn());
  return html`<section class="panel device-settings" aria-labelledby="device-title">
    <h2 id="device-title">${t("device.title")}</h2>
    <label class="level-choice">
      <input
        type="checkbox"
        id="guard-toggle"
        checked=${on}
        onChange=${(e) => {
          setGuard(e.currentTarget.checked);
          setOn(e.currentTarget.checked);
        }}
      />
      <span>${t("device.guard")}<br /><span class="muted">${t("device.guardHelp")}</span></span>
    </label>
  </section>`;
}
