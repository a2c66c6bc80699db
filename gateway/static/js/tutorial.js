// (ext) The guided round (issue 46): the coach at a tutorial table, the offer on the home page,
// and where to go next. The server chooses everything (engine/tutorial.py): the client asks for
// "the tutorial" and shows, one at a time, the instruction the table sends its learner (the
// `tutorial` event and `welcome.table.tutorial`, engine/coach.py), pointing at what to tap.
// Done or skipped is remembered on the device; "How to play" offers it again (`/?tutorial`).
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { api, loadSession } from "./api.js";
import { Msg, seatName } from "./names.js";
import { navigate } from "./router.js";
import { toast } from "./toast.js";
import { errorText } from "./words.js";
import { startPractice } from "./settings.js";

const DONE_KEY = "quatro.tutorial"; // "done" | "skipped"
const LEFT_KEY = "quatro.tutorialLeft"; // this tab just left one: the home page says what next
// A lesson's end: what happened, under the reveal's own account of it.
const AFTER = new Set(["done1", "done2", "missed", "finished"]);

export async function startTutorial(token) {
  const body = {};
  // Tests speed its clock up; the server takes it only with QUATRO_TEST_HOOKS=1.
  const scenario = JSON.parse(sessionStorage.getItem("quatro.scenario") || "null");
  if (scenario) body.scenario = { seed: scenario.seed ?? 0, time_scale: scenario.time_scale ?? 1 };
  return (await api.startTutorial(token, body)).code;
}

// A first visit: no session yet and no tutorial done or skipped on this device.
export function firstVisit() {
  return !loadSession() && !localStorage.getItem(DONE_KEY);
}

// "How to play" links to `/?tutorial`: the home page starts one. Read once, then dropped from
// the address so that a reload does not start another.
export function askedFor() {
  const params = new URLSearchParams(location.search);
  if (!params.has("tutorial")) return false;
  history.replaceState(null, "", "/");
  return true;
}

// What the coach points at for each step: CSS selectors within the table page.
function targets(c, tb, you) {
  const seat = (s) => `.seat[data-seat="${s}"]`;
  switch (c.step) {
    case "sign":
    case "sign_again":
      return [".signing .emoji-grid"];
    case "ready":
    case "ready_partner":
      return ["#ready-btn"];
    case "swap":
    case "swap_more":
      return c.card ? [`.hand-card[data-card-id="${c.card}"]`, `.slot[data-slot="${c.slot}"]`] : [];
    case "floor":
      return ["#floor-toggle"];
    case "show":
      return ["#emit-toggle", `#emit-picker [data-emoji="${c.emoji}"]`];
    case "wait":
    case "watch_partner":
    case "seen_once":
      return [seat(c.seat)];
    case "call_quatro":
      return ["#call-quatro", seat(c.seat)];
    case "call_contre":
      return ["#call-contre", seat(c.seat)];
    case "watch_others":
      return tb.seats.filter((s) => s.team !== you.team).map((s) => seat(s.seat));
    case "done1":
    case "done2":
    case "missed":
      return ["#start-now"];
    default:
      return [];
  }
}

// The marks stay on what the step points at while the page changes under it (a picker that
// opens, cards dealt): the table page is watched for elements coming and going.
function useMarks(selectors) {
  const key = selectors.join("|");
  useEffect(() => {
    const root = document.querySelector(".table-page") || document.body;
    const mark = () => {
      const want = new Set(selectors.flatMap((s) => [...root.querySelectorAll(s)]));
      for (const el of root.querySelectorAll("[data-coach]")) {
        if (!want.has(el)) el.removeAttribute("data-coach");
      }
      for (const el of want) if (!el.hasAttribute("data-coach")) el.setAttribute("data-coach", "");
    };
    mark();
    // Brought into view once, when the step changes: on a small phone it may be below.
    root.querySelector("[data-coach]")?.scrollIntoView({ block: "nearest" });
    const watcher = new MutationObserver(mark);
    watcher.observe(root, { childList: true, subtree: true });
    return () => {
      watcher.disconnect();
      for (const el of root.querySelectorAll("[data-coach]")) el.removeAttribute("data-coach");
    };
  }, [key]);
}

function leave(code, why) {
  localStorage.setItem(DONE_KEY, why);
  if (why === "skipped") {
    sessionStorage.setItem(LEFT_KEY, "1");
    // The table ends the match and forgets the seat; the page goes home whatever it answers.
    api.endTutorial(loadSession()?.token, code).catch(() => {});
  }
}

// Above the table, one instruction at a time: the lesson, what to do, at most one why.
export function Coach({ game }) {
  const tb = game.table;
  const c = tb.tutorial;
  const step = c?.step;
  const box = useRef(null);
  useMarks(c ? targets(c, tb, game.you) : []);
  useEffect(() => {
    if (step === "finished") localStorage.setItem(DONE_KEY, "done");
    // The reveal brings itself into view as it opens (js/panels.js); a lesson's end then reads
    // from the top: the coach's words, the reveal, and the button on at its foot.
    if (AFTER.has(step)) requestAnimationFrame(() => box.current?.scrollIntoView({ block: "start" }));
  }, [step]);
  if (!c || step === "left") return null;
  const vars = {
    sign: tb.sign,
    emoji: c.emoji,
    name: c.seat === null ? "" : seatName(tb.seats, c.seat),
    ready: t("sign.ready"),
    floor: t("floor.take"),
    pick: t("floor.choose"),
    next: t("reveal.startNow"),
  };
  const why = `tutorial.why.${step}`;
  function skip() {
    leave(tb.code, "skipped");
    navigate("/");
  }
  return html`<section
    class="coach ${AFTER.has(step) ? "after" : ""}"
    ref=${box}
    aria-labelledby="coach-title"
    data-step=${step}
    data-lesson=${c.lesson}
  >
    <div class="coach-head">
      <h2 id="coach-title" class="coach-lesson">
        ${t("tutorial.lesson", { lesson: c.lesson, lessons: c.lessons })}
      </h2>
      ${step !== "finished" &&
      html`<button type="button" id="coach-skip" onClick=${skip}>
        ${t("tutorial.skip")}
      </button>`}
    </div>
    <p class="coach-say" role="status"><${Msg} k=${`tutorial.step.${step}`} vars=${vars} /></p>
    ${t(why) !== why && html`<p class="coach-why"><${Msg} k=${why} vars=${vars} /></p>`}
    ${step === "finished" && html`<${NextSteps} />`}
  </section>`;
}

// Where to go from here: a table of people now, or more practice with bots.
export function NextSteps() {
  const [busy, setBusy] = useState(false);
  async function go(open) {
    const token = loadSession()?.token;
    if (!token) return navigate("/");
    setBusy(true);
    try {
      navigate(`/t/${await open(token)}`);
    } catch (err) {
      toast(errorText(err), "error");
      setBusy(false);
    }
  }
  return html`<div class="row coach-next">
    <button
      type="button"
      class="primary"
      id="next-play"
      disabled=${busy}
      onClick=${() => go(async (token) => (await api.quickPlay(token, 4)).code)}
    >
      ${t("home.quickPlay")}
    </button>
    <button type="button" id="next-practice" disabled=${busy} onClick=${() => go(startPractice)}>
      ${t("home.practice")}
    </button>
  </div>`;
}

// On the home page: the offer on a first visit (or when "How to play" asked for it), and after
// leaving one, what next.
export function TutorialPanel({ busy, onStart, offer }) {
  const [left] = useState(() => sessionStorage.getItem(LEFT_KEY) === "1");
  useEffect(() => sessionStorage.removeItem(LEFT_KEY), []);
  if (left) {
    return html`<div class="panel coach-left" id="tutorial-left" role="status">
      <h2>${t("tutorial.leftTitle")}</h2>
      <p>${t("tutorial.leftLead")}</p>
      <${NextSteps} />
    </div>`;
  }
  if (!offer) return null;
  return html`<div class="panel tutorial-offer" id="tutorial-offer">
    <h2>${t("tutorial.offerTitle")}</h2>
    <p>${t("tutorial.offerLead")}</p>
    <button type="button" class="primary big" id="tutorial-start" disabled=${busy} onClick=${onStart}>
      ${t("tutorial.start")}
    </button>
  </div>`;
}
