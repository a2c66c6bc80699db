// One table's controller: the WebSocket, the state, what each event says aloud and sounds
// like, and the player's intents (swap, floor, calls…) turned into frames. Before the player
// holds a seat, the table's public summary is polled instead (hello needs a seat).
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { api, ApiError, ensureSession, loadSession, rememberedName, saveSession } from "./api.js";
import { Connection } from "./connection.js";
import { addPending, dropPending, fromWelcome, reduce, setChoice, shown } from "./state.js";
import { NameField, SeatsPanel, cleanName, errorText } from "./lobby.js";
import { nameProblem } from "./namecheck.js";
import { TableView } from "./table.js";
import { effects } from "./effects.js";
import { announce } from "./announce.js";
import { play } from "./sound.js";
import { toast } from "./toast.js";
import { navigate } from "./router.js";
import { startPracticeWhenSeated } from "./settings.js";

const POLL_MS = 2000;

export function TableRoute({ code }) {
  const [mode, setMode] = useState(loadSession() ? "connecting" : "unseated");
  const [game, setGame] = useState(null);
  const [status, setStatus] = useState("connecting");
  const [summary, setSummary] = useState(null);
  const [name, setName] = useState(loadSession()?.name || rememberedName());
  const [flash, setFlash] = useState(null);
  const conn = useRef(null);
  const gameRef = useRef(null);
  const wasOnline = useRef(false);

  function update(next) {
    gameRef.current = next;
    setGame(next);
  }

  const scaleKey = `quatro.scale.${code}`;

  // Watching is remembered for the tab, so a reload watches again instead of asking for a seat.
  const watchKey = `quatro.watch.${code}`;

  // Resolved by the next welcome: asking for a bot's seat waits for a claimant's hello first.
  const welcomed = useRef(null);

  function connect(token, watch = false, claimant = false) {
    conn.current?.stop();
    if (watch) sessionStorage.setItem(watchKey, claimant ? "claim" : "1");
    else sessionStorage.removeItem(watchKey);
    const c = new Connection({
      token,
      table: code,
      watch,
      claimant,
      handlers: {
        onWelcome: (frame) => {
          welcomed.current?.(frame);
          welcomed.current = null;
          const g = fromWelcome(frame, gameRef.current);
          // The table's time scale is only learnt from signing/round events: keep it over a
          // reload so cooldown rings stay true on test tables with fast clocks.
          const saved = Number(sessionStorage.getItem(scaleKey));
          if (!gameRef.current && saved > 0) g.timeScale = saved;
          update(g);
          setMode(frame.you.watching ? "watching" : "seated");
          startPracticeWhenSeated(code, frame);
        },
        onEvent: (ev) => {
          const g = gameRef.current;
          if (!g) return;
          effects(ev, g);
          // Joining late: the seat we asked for became a player's, so ours. The table closes
          // this watching socket (4411); should that not come (a table restarted meanwhile
          // forgets its watchers), say hello seated all the same.
          if (g.you.watching && ev.type === "seat" && ev.kind === "human" && ev.seat === g.myClaim) {
            setTimeout(() => {
              if (conn.current !== c || !c.watch) return;
              c.watch = false;
              sessionStorage.removeItem(watchKey);
              c.resync();
            }, 2000);
          }
          const next = reduce(g, ev);
          if (next.timeScale !== g.timeScale) sessionStorage.setItem(scaleKey, next.timeScale);
          update(next);
        },
        onSeatGiven: () => {
          // Joining late: the seat asked for is ours; the next hello is a seated one.
          sessionStorage.removeItem(watchKey);
          toast(t("late.yours"));
          announce(t("late.yours"), { urgent: true });
        },
        onStatus: (s) => {
          if (s === "online") wasOnline.current = true;
          setStatus(s);
        },
        onFatal: (why) => {
          if (why === "no_seat") setMode("unseated");
          else if (why === "bad_token") {
            saveSession(null);
            setMode("unseated");
          } else if (why === "unknown_table") setMode("missing");
          else if (why === "watching_off") {
            sessionStorage.removeItem(watchKey);
            gameRef.current = null;
            setGame(null);
            setMode("unseated");
            toast(t("watch.off"), "info");
          }
          else if (why === "replaced") setStatus("replaced");
        },
      },
    });
    conn.current = c;
    c.start();
  }

  useEffect(() => {
    const s = loadSession();
    const w = sessionStorage.getItem(watchKey);
    if (s) connect(s.token, w === "1" || w === "claim", w === "claim");
    return () => conn.current?.stop();
  }, [code]);

  async function watch() {
    // A name typed here is the one a bot's seat taken late will carry (joining late).
    const clean = cleanName(name);
    const problem = clean ? nameProblem(clean) : null;
    if (problem) {
      toast(t(problem), "error");
      document.getElementById("player-name")?.focus();
      return;
    }
    try {
      const s = await ensureSession(clean || t("watch.defaultName"));
      setMode("connecting");
      connect(s.token, true);
    } catch (err) {
      toast(errorText(err), "error");
    }
  }

  function stopWatching() {
    conn.current?.stop();
    sessionStorage.removeItem(watchKey);
    gameRef.current = null;
    setGame(null);
    setMode("unseated");
  }

  // Unseated: follow the public summary so seats fill in as others sit down.
  useEffect(() => {
    if (mode !== "unseated") return undefined;
    let alive = true;
    const poll = async () => {
      try {
        const sum = await api.table(code);
        if (alive) setSummary(sum);
      } catch (err) {
        if (alive && err instanceof ApiError && err.status === 404) setMode("missing");
      }
    };
    poll();
    const timer = setInterval(poll, POLL_MS);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, [mode, code]);

  // The host freed our seat in the lobby: back to the seat list.
  const mySeat = game?.you?.seat;
  const mySeatRow = game?.table?.seats?.[mySeat];
  useEffect(() => {
    if (mode === "seated" && game?.table.phase === "lobby" && mySeatRow && !mySeatRow.kind) {
      conn.current?.stop();
      setMode("unseated");
      toast(t("lobby.freed"));
    }
  }, [mode, mySeatRow]);

  async function take(seat) {
    const clean = cleanName(name);
    const problem = nameProblem(clean);
    if (problem) {
      toast(t(problem), "error");
      document.getElementById("player-name")?.focus();
      return;
    }
    try {
      const s = await ensureSession(clean);
      await api.takeSeat(s.token, code, seat);
      setMode("connecting");
      connect(s.token);
    } catch (err) {
      if (err.code === "already_seated") {
        setMode("connecting");
        connect(loadSession().token);
        return;
      }
      toast(errorText(err), "error");
    }
  }

  async function lobbyAction(kind, seat) {
    const token = loadSession()?.token;
    try {
      if (kind === "addBot") await api.addBot(token, code, seat);
      else if (kind === "removeBot") await api.removeBot(token, code, seat);
      else if (kind === "free") await api.leaveSeat(token, code, seat);
      else if (kind === "start") await api.start(token, code);
      else if (kind === "leave") {
        await api.leaveSeat(token, code, seat);
        conn.current?.stop();
        setMode("unseated");
      }
    } catch (err) {
      toast(errorText(err), "error");
    }
  }

  // Send a frame; refusals become a toast and a spoken line. Returns the answer or null.
  async function send(frame, { quiet = [] } = {}) {
    let answer;
    try {
      answer = await conn.current.send(frame);
    } catch (err) {
      const text = t(err.message === "offline" ? "err.offline" : "err.unconfirmed");
      toast(text, "error");
      announce(text, { urgent: true });
      return null;
    }
    if (answer.type === "error" && !quiet.includes(answer.code)) {
      const text = errorText(answer);
      toast(text, "error");
      announce(text, { urgent: true });
    }
    return answer;
  }

  async function swap(card, slot) {
    const g = gameRef.current;
    const { hand, center } = shown(g);
    const cardObj = hand.find((c) => c.id === card);
    const expect = center[slot]?.id;
    if (!cardObj || !expect || g.pending.length) return;
    update(addPending(g, { card, slot, expect, cardObj }));
    play("swap");
    const answer = await send({ type: "swap", card, slot, expect }, { quiet: ["stale"] });
    if (!answer || answer.type === "error") {
      update(dropPending(gameRef.current, card));
      if (answer?.code === "stale") {
        play("stale");
        setFlash({ slot, n: Date.now() });
        const text = t("err.stale");
        toast(text, "error");
        announce(text, { urgent: true });
      }
    }
  }

  async function emit(emoji) {
    const prev = gameRef.current.table.choice;
    update(setChoice(gameRef.current, emoji));
    const answer = await send({ type: "emit", emoji });
    if (!answer || answer.type === "error") update(setChoice(gameRef.current, prev));
  }

  // Joining late (REST): ask for a bot's seat, withdraw, and the host's answer.
  async function lateJoin(kind, seat, accept) {
    const token = loadSession()?.token;
    try {
      if (kind === "claim") {
        if (!conn.current?.claimant) {
          // The table hands the seat to a watching socket it knows by itself: say hello again
          // as a claimant first (other watchers share their gateway's view).
          const ready = new Promise((resolve, reject) => {
            welcomed.current = resolve;
            setTimeout(() => reject(new Error("no welcome")), 10_000);
          });
          connect(token, true, true);
          await ready;
        }
        await api.claim(token, code, seat);
        const g = gameRef.current;
        if (g && g.myClaim === null) update({ ...g, myClaim: seat });
      } else if (kind === "cancel") {
        const g = gameRef.current;
        if (g) update({ ...g, myClaim: null });
        await api.cancelClaim(token, code);
      } else if (kind === "answer") {
        await api.answerClaim(token, code, seat, accept);
      }
    } catch (err) {
      toast(errorText(err), "error");
    }
  }

  const actions = {
    lateJoin,
    swap,
    emit,
    send,
    ready: () => send({ type: "ready" }),
    sign: (emoji) => send({ type: "sign", emoji }),
    floor: (open) => send({ type: "floor", open }),
    quatro: () => send({ type: "quatro" }),
    contre: (team) => send(team === null ? { type: "contre" } : { type: "contre", team }),
    voteRequest: () => send({ type: "vote_request" }),
    vote: (accept) => send({ type: "vote", accept }),
    nextRound: () => send({ type: "next_round" }),
    rematch: () => send({ type: "rematch" }),
  };

  const banner = html`<${ConnectionBanner}
    status=${status}
    show=${(mode === "seated" || mode === "watching") && wasOnline.current}
    onRetry=${() => conn.current?.retryNow()}
  />`;

  if (mode === "missing") {
    return html`<section class="panel center-text" role="alert">
      <h1>${t("err.unknown_table")}</h1>
      <button type="button" onClick=${() => navigate("/")}>${t("nav.home")}</button>
    </section>`;
  }
  if (mode === "unseated") {
    if (!summary) return html`<p class="loading" role="status">${t("status.loading")}</p>`;
    if (summary.phase !== "lobby") {
      // Bots hold seats and the host lets people join late: watching is the way to a seat.
      const closed = summary.settings?.watchers === false;
      const botSeats = summary.seats.filter((s) => s.kind === "bot").length;
      const late =
        !closed && botSeats > 0 && summary.phase !== "over" && summary.settings?.late_join !== "never";
      return html`<section class="panel center-text" data-late=${late ? "yes" : "no"}>
        <h1>${late ? t("late.started", { n: botSeats }) : t("lobby.started")}</h1>
        ${closed
          ? html`<p id="watch-closed">${t("watch.closed")}</p>`
          : html`<p>${late ? t("late.startLead") : t("watch.lead")}</p>`}
        ${late && html`<${NameField} value=${name} onInput=${setName} />`}
        <p>
          ${summary.settings?.watchers !== false &&
          html`<button type="button" id="watch-btn" class="primary" onClick=${watch}>
            ${t("watch.button")}
          </button>`}
          <button type="button" onClick=${() => navigate("/")}>${t("nav.home")}</button>
        </p>
      </section>`;
    }
    return html`<${SeatsPanel}
      code=${code}
      table=${summary}
      mySeat=${null}
      onTake=${take}
      onAction=${lobbyAction}
      name=${name}
      setName=${setName}
    />`;
  }
  if (!game) return html`${banner}<p class="loading" role="status">${t("status.connecting")}</p>`;
  if (game.table.phase === "lobby") {
    return html`${banner}<${SeatsPanel}
        code=${code}
        table=${game.table}
        mySeat=${game.you.seat}
        onTake=${take}
        onAction=${lobbyAction}
        name=${name}
        setName=${setName}
      />`;
  }
  return html`${banner}<${TableView}
      game=${game}
      actions=${actions}
      flash=${flash}
      status=${status}
      onStopWatching=${stopWatching}
    />`;
}

function ConnectionBanner({ status, show, onRetry }) {
  if (!show || status === "online") return null;
  if (status === "replaced") {
    return html`<div class="banner warn" role="alert">
      <span>${t("conn.replaced")}</span>
      <button type="button" onClick=${onRetry}>${t("conn.useHere")}</button>
    </div>`;
  }
  return html`<div class="banner" role="status" data-conn=${status}>
    <span class="spinner" aria-hidden="true"></span>
    <span>${t("conn.lost")}</span>
    <button type="button" onClick=${onRetry}>${t("conn.retry")}</button>
  </div>`;
}
