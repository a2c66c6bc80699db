// The lobby: the home page (name, new table, join by code) and a table's seats before the match
// (take a seat, invite link, and the host's bots and start button).
import { Fragment } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { clock, t } from "./i18n.js";
import { api, ensureSession, loadSession, rememberedName } from "./api.js";
import { Msg, Name, teamLabel } from "./names.js";
import { MAX_CODE_POINTS, nameProblem } from "./namecheck.js";
import { InviteBox } from "./invite.js";
import { useFocusRescue } from "./focus.js";
import { navigate } from "./router.js";
import { TableSettings, startPractice } from "./settings.js";
import { TutorialPanel, askedFor, firstVisit, startTutorial } from "./tutorial.js";
import { Countdown, useSeconds } from "./ticking.js";
import { Cancelled, withRetry } from "./retry.js";
import { serverNow } from "./servertime.js";
import { PasskeySignIn } from "./signin.js";
import { passkeysWork } from "./passkey.js";
import { cleanName, errorText } from "./words.js";

export { cleanName, errorText };

export function NameField({ value, onInput, id = "player-name", inputRef = null }) {
  return html`<div class="field">
    <label for=${id}>${t("lobby.nameLabel")}</label>
    <input
      id=${id}
      ref=${inputRef}
      name="name"
      autocomplete="nickname"
      maxlength=${MAX_CODE_POINTS}
      required
      value=${value}
      placeholder=${t("lobby.namePlaceholder")}
      onInput=${(e) => onInput(e.currentTarget.value)}
    />
  </div>`;
}

export function Home() {
  const session = loadSession();
  const [name, setName] = useState(session?.name || rememberedName());
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [mine, setMine] = useState([]);
  const [quickSize, setQuickSize] = useState(4);
  // While the server has no room (or a backend is away): the refusal, and when the next try is.
  const [waiting, setWaiting] = useState(null);
  const stopWaiting = useRef(null);
  useEffect(() => () => stopWaiting.current?.abort(), []);

  // Tables where this browser's session still holds a seat, as the tables themselves say.
  useEffect(() => {
    if (!session) return undefined;
    let alive = true;
    api.myTables(session.token).then(
      (found) => alive && setMine(found.tables),
      () => {},
    );
    return () => {
      alive = false;
    };
  }, []);

  // Every way to a table from here: check the name, open a session, go where `open` says.
  // Practice asks only for a name: its table is this player's alone.
  // A full cluster or a backend away for a moment (503 with Retry-After) is tried again by
  // itself, with the wait shown and a button to stop (retry.js bounds it).
  async function enter(open, check = nameProblem) {
    const clean = cleanName(name);
    const problem = check(clean);
    if (problem) return setError(t(problem));
    setBusy(true);
    setError("");
    const stop = new AbortController();
    stopWaiting.current = stop;
    try {
      const code = await withRetry(async () => open((await ensureSession(clean)).token), {
        signal: stop.signal,
        onWait: (err, ms) => setWaiting({ text: errorText(err), at: serverNow() + ms }),
      });
      navigate(`/t/${code}`);
    } catch (err) {
      if (err instanceof Cancelled) return;
      setError(err.gaveUp ? `${errorText(err)} ${t("home.retryGaveUp")}` : errorText(err));
    } finally {
      if (stopWaiting.current === stop) stopWaiting.current = null;
      setWaiting(null);
      setBusy(false);
    }
  }

  const create = (players) => enter(async (token) => (await api.createTable(token, players)).code);
  // Quick play: a seat at a public table that is filling, or a new one; the table page follows.
  const playNow = () => enter(async (token) => (await api.quickPlay(token, quickSize)).code);
  const practice = () => enter(startPractice, (clean) => (clean ? null : "err.name_required"));
  // (ext) The guided round: offered on a first visit, and started at once when "How to play"
  // sent the player here with a name already known.
  const [asked] = useState(askedFor);
  const [offer] = useState(() => asked || firstVisit());
  const learn = () => enter(startTutorial, (clean) => (clean ? null : "err.name_required"));
  useEffect(() => {
    if (asked && cleanName(name)) learn();
    else if (asked) document.getElementById("player-name")?.focus();
  }, []);

  function join(e) {
    e.preventDefault();
    const c = code.replace(/[^A-Za-z0-9]/g, "").toUpperCase();
    if (!c) return setError(t("err.code_required"));
    const clean = cleanName(name);
    if (clean) localStorage.setItem("quatro.name", clean);
    navigate(`/t/${c}`);
  }

  return html`<section class="home" aria-labelledby="home-title">
    <h1 id="home-title">${t("home.title")}</h1>
    <p class="lead">${t("home.lead")}</p>
    <${PagesNav} signedIn=${!!session} signIn=${!session && passkeysWork()} />
    ${mine.length > 0 && html`<${ReturnPanel} tables=${mine} />`}
    <${NameField} value=${name} onInput=${setName} />
    <${TutorialPanel} busy=${busy} onStart=${learn} offer=${offer} />
    ${waiting &&
    html`<${RoomWait} waiting=${waiting} onStop=${() => stopWaiting.current?.abort()} />`}
    <div class="panel quick" role="group" aria-labelledby="quick-title">
      <h2 id="quick-title">${t("home.quickTitle")}</h2>
      <p>${t("home.quickLead")}</p>
      <fieldset class="row quick-sizes">
        <legend class="visually-hidden">${t("home.quickSize")}</legend>
        ${[4, 6, 8].map(
          (n) => html`<label class="choice">
            <input
              type="radio"
              name="quick-size"
              value=${n}
              data-quick-size=${n}
              checked=${quickSize === n}
              onChange=${() => setQuickSize(n)}
            />
            ${t("home.quickSeats", { n })}
          </label>`,
        )}
      </fieldset>
      <button type="button" class="primary big" id="quick-play" disabled=${busy} onClick=${playNow}>
        ${t("home.quickPlay")}
      </button>
    </div>
    <div class="panel">
      <h2>${t("home.newTable")}</h2>
      <div class="row">
        ${[4, 6, 8].map(
          (n) => html`<button
            type="button"
            class="primary"
            data-players=${n}
            disabled=${busy}
            onClick=${() => create(n)}
          >
            ${t("home.createFor", { n })}
          </button>`,
        )}
      </div>
    </div>
    <div class="panel practice">
      <h2>${t("home.practiceTitle")}</h2>
      <p>${t("home.practiceLead")}</p>
      <button type="button" class="primary" id="practice" disabled=${busy} onClick=${practice}>
        ${t("home.practice")}
      </button>
    </div>
    <form class="panel" onSubmit=${join}>
      <h2>${t("home.joinTitle")}</h2>
      <div class="row">
        <label class="visually-hidden" for="join-code">${t("home.codeLabel")}</label>
        <input
          id="join-code"
          class="code-input"
          autocapitalize="characters"
          autocomplete="off"
          spellcheck="false"
          maxlength="12"
          placeholder=${t("home.codePlaceholder")}
          value=${code}
          onInput=${(e) => setCode(e.currentTarget.value)}
        />
        <button type="submit">${t("home.join")}</button>
      </div>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${!session && html`<${PasskeySignIn} onSignedIn=${(s) => setName(s.name)} />`}
  </section>`;
}

// The ways to the profile and the leaderboards (issue 36), on the home page and on theirs. At
// the top of the home page: at its foot a phone showed them only after four panels of scrolling.
// `signIn`: a way down to the passkey sign-in, at the foot so that a first game comes first.
export function PagesNav({ signedIn, here = "", signIn = false }) {
  const link = (id, path, key) =>
    here === path
      ? null
      : html`<a class="button" id=${id} href=${path} onClick=${(e) => (e.preventDefault(), navigate(path))}
          >${t(key)}</a
        >`;
  return html`<nav class="row home-links" aria-label=${t("nav.pages")}>
    ${here !== "" && link("to-home", "/", "nav.home")}
    ${signedIn && link("to-profile", "/profile", "home.profile")}
    ${link("to-board", "/leaderboard", "home.leaderboards")}
    ${signIn &&
    html`<a class="button" id="to-sign-in" href="#passkey-sign-in" onClick=${toSignIn}>${t("passkey.signIn")}</a>`}
  </nav>`;
}

function toSignIn(e) {
  e.preventDefault();
  const button = document.getElementById("passkey-sign-in");
  button?.scrollIntoView({ block: "center" });
  button?.focus({ preventScroll: true });
}

// The status stays one sentence for the whole wait (a live region that changed every second
// would speak every second); the clock beside it is a timer, which screen readers leave silent.
function RoomWait({ waiting, onStop }) {
  const left = waiting.at - useSeconds(waiting.at);
  return html`<div class="panel room-wait" id="room-wait">
    <p role="status">${waiting.text} ${t("home.retryAuto")}</p>
    <p class="row">
      ${left > 0
        ? html`<span class="muted" aria-hidden="true">${t("home.retryClock")}</span>
            <span class="countdown" role="timer" aria-label=${t("home.retryClock")}>${clock(left)}</span>`
        : html`<span class="muted">${t("home.retryNow")}</span>`}
      <button type="button" id="retry-stop" onClick=${onStop}>${t("home.retryStop")}</button>
    </p>
  </div>`;
}

function ReturnPanel({ tables }) {
  return html`<nav class="panel return" aria-labelledby="return-title">
    <h2 id="return-title">${t("home.returnTitle")}</h2>
    <ul class="return-list">
      ${tables.map(
        (tb) => html`<li key=${tb.code}>
          <a
            class="link-button"
            href=${`/t/${tb.code}`}
            data-return=${tb.code}
            onClick=${(e) => (e.preventDefault(), navigate(`/t/${tb.code}`))}
          >
            ${t("home.returnTo")}
          </a>
          <span class="muted"
            >${`${t(`home.returnPhase.${tb.phase}`)} · ${t("home.returnWhere", { code: tb.code, n: tb.seat + 1 })}`}</span
          >
        </li>`,
      )}
    </ul>
  </nav>`;
}

// Seats grouped by team: partners (k and k + n/2) side by side, as they sit opposite.
// `nameRef`: the name field, for the page to focus when the name is refused.
export function SeatsPanel({ code, table, mySeat, onTake, onAction, name, setName, nameRef = null }) {
  const n = table.players;
  const seats = table.seats;
  // A public (quick-play) table has no host (`host` null): nobody adds bots or starts it.
  const host = table.host ?? null;
  const isHost = host !== null && mySeat === host;
  const seated = mySeat !== null && mySeat !== undefined;
  const free = seats.filter((s) => !s.kind).length;
  const teams = Array.from({ length: n / 2 }, (_, k) => [k, k + n / 2]);
  // Arriving (a new table, a seat taken): the title. A button gone once used (a bot added): the
  // host's next step, another bot or the start.
  const arrived = useRef(false);
  const panel = useRef(null);
  const title = useRef(null);
  useFocusRescue(() =>
    arrived.current
      ? panel.current?.querySelector("#start-match:not([disabled]), [data-addbot]") || title.current
      : title.current,
  );
  useEffect(() => {
    arrived.current = true;
  });

  function seatRow(s) {
    const row = seats[s];
    const mine = s === mySeat;
    let action = null;
    // Keyed by what sits in the seat: "Add a bot" and "Remove bot" are different buttons, so
    // focus never stays on a button whose meaning just changed under it.
    if (!row.kind && !seated) {
      action = html`<button type="button" class="primary" data-take=${s} onClick=${() => onTake(s)}>
        ${t("lobby.takeSeat")}
      </button>`;
    } else if (!row.kind && isHost) {
      action = html`<button type="button" data-addbot=${s} onClick=${() => onAction("addBot", s)}>
        ${t("lobby.addBot")}
      </button>`;
    } else if (row.kind === "bot" && isHost) {
      action = html`<button type="button" onClick=${() => onAction("removeBot", s)}>
        ${t("lobby.removeBot")}
      </button>`;
    } else if (row.kind === "human" && mine && s !== host) {
      action = html`<button type="button" onClick=${() => onAction("leave", s)}>
        ${t("lobby.leave")}
      </button>`;
    } else if (row.kind === "human" && isHost && s !== host) {
      action = html`<button type="button" onClick=${() => onAction("free", s)}>
        ${t("lobby.freeSeat")}
      </button>`;
    }
    return html`<li class="seat-row ${mine ? "mine" : ""}" data-seat=${s} data-kind=${row.kind || ""}>
      <span class="seat-no">${t("seat.numbered", { n: s + 1 })}</span>
      <span class="seat-who">
        ${row.kind ? html`<${Name} seats=${seats} seat=${s} />` : html`<em>${t("seat.empty")}</em>`}
        ${row.kind === "bot" && html` <span class="tag">${t("seat.botTag")}</span>`}
        ${s === host && html` <span class="tag">${t("seat.hostTag")}</span>`}
        ${mine && html` <span class="tag you">${t("seat.youTag")}</span>`}
      </span>
      ${action && html`<${Fragment} key=${`${row.kind || "empty"}-${s}`}>${action}<//>`}
    </li>`;
  }

  return html`<section class="lobby" aria-labelledby="lobby-title" ref=${panel}>
    <h1 id="lobby-title" tabindex="-1" ref=${title}>${t("lobby.title", { n })}</h1>
    <${InviteBox} code=${code} />
    ${!seated && html`<${NameField} value=${name} onInput=${setName} inputRef=${nameRef} />`}
    <p class="hint">${t("lobby.partnersHint")}</p>
    <div class="teams">
      ${teams.map(
        ([a, b], k) => html`<section class="team-box team-${k}" aria-label=${teamLabel(k)}>
          <h2><span class="team-dot" aria-hidden="true"></span>${teamLabel(k)}</h2>
          <ul>
            ${seatRow(a)} ${seatRow(b)}
          </ul>
        </section>`,
      )}
    </div>
    <${TableSettings} code=${code} table=${table} isHost=${isHost} />
    <${LobbyBar}
      table=${table}
      isHost=${isHost}
      waitFor=${seated && host !== null && !isHost ? seats[host]?.name || "" : null}
      free=${free}
      onAction=${onAction}
    />
  </section>`;
}

// What the lobby waits for, and the host's next steps (fill the empty seats, start), in a bar
// held at the bottom of the screen: on a phone the settings push them below the fold.
function LobbyBar({ table, isHost, waitFor, free, onAction }) {
  return html`<div class="lobby-bar" id="lobby-bar">
    <p class="status-line" role="status">
      ${free === 0 ? t("lobby.full") : t("lobby.seatsFree", { n: free })}
    </p>
    ${isHost &&
    html`<div class="lobby-actions">
      ${free > 0 &&
      html`<button type="button" id="fill-bots" onClick=${() => onAction("fillBots")}>
        ${t("lobby.fillBots")}
      </button>`}
      <button
        type="button"
        class="primary big"
        id="start-match"
        disabled=${free > 0}
        onClick=${() => onAction("start")}
      >
        ${t("lobby.start")}
      </button>
    </div>`}
    ${waitFor !== null &&
    html`<p class="hint"><${Msg} k="lobby.waitHost" vars=${{ name: waitFor }} /></p>`}
    ${table.public &&
    html`<p class="hint" id="quick-wait">
      ${t("lobby.quickWait")}
      ${table.fills_at && html` <${Countdown} deadline=${table.fills_at} label=${t("lobby.quickClock")} />`}
    </p>`}
  </div>`;
}
