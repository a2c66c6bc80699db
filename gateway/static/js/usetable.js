// One table's controller, as a hook: the WebSocket, the game state, and the player's intents
// (swap, floor, calls, lobby actions, joining late, watching) turned into frames and REST
// calls. Before the player holds a seat, the table's public summary is polled instead (hello
// needs a seat). What the page shows follows `mode`, changed only through `modeReducer`.
import { useEffect, useReducer, useRef, useState } from "preact/hooks";
import { t } from "./i18n.js";
import { api, ApiError, ensureSession, loadSession, rememberedName, saveSession } from "./api.js";
import { Connection } from "./connection.js";
import { addPending, dropPending, fromWelcome, reduce, setChoice, shown } from "./state.js";
import { cleanName, errorText } from "./words.js";
import { nameProblem } from "./namecheck.js";
import { effects } from "./effects.js";
import { announce } from "./announce.js";
import { play } from "./sound.js";
import { toast } from "./toast.js";
import { startPracticeWhenSeated } from "./settings.js";

const POLL_MS = 2000;

// Modes: "connecting" (a hello under way), "unseated" (the public summary, polled), "seated",
// "watching", "missing" (no such table). The close reasons of connection.js (`fatal`) that
// leave the table send the player back to the seat list; "replaced" is only a status.
export function modeReducer(mode, action) {
  switch (action.type) {
    case "connecting":
      return "connecting";
    case "welcomed":
      return action.watching ? "watching" : "seated";
    case "fatal":
      if (action.why === "unknown_table") return "missing";
      if (["no_seat", "bad_token", "watching_off"].includes(action.why)) return "unseated";
      return mode;
    // The host freed our seat in the lobby.
    case "freed":
      return mode === "seated" ? "unseated" : mode;
    case "left":
    case "watchStopped":
      return "unseated";
    case "missing":
      return "missing";
    default:
      return mode;
  }
}

// `onBadName`: the name typed was refused before anything was sent (the page focuses its field).
export function useTable(code, { onBadName = () => {} } = {}) {
  const [mode, dispatch] = useReducer(modeReducer, loadSession() ? "connecting" : "unseated");
  const [game, setGame] = useState(null);
  const [status, setStatus] = useState("connecting");
  const [summary, setSummary] = useState(null);
  const [name, setName] = useState(loadSession()?.name || rememberedName());
  const [flash, setFlash] = useState(null);
  const conn = useRef(null);
  // The socket's handlers and the intents' awaits read the latest state, not their render's.
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
          dispatch({ type: "welcomed", watching: Boolean(frame.you.watching) });
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
          if (why === "bad_token") saveSession(null);
          if (why === "watching_off") {
            sessionStorage.removeItem(watchKey);
            update(null);
            toast(t("watch.off"), "info");
          }
          if (why === "replaced") setStatus("replaced");
          dispatch({ type: "fatal", why });
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
      onBadName();
      return;
    }
    try {
      const s = await ensureSession(clean || t("watch.defaultName"));
      dispatch({ type: "connecting" });
      connect(s.token, true);
    } catch (err) {
      toast(errorText(err), "error");
    }
  }

  function stopWatching() {
    conn.current?.stop();
    sessionStorage.removeItem(watchKey);
    update(null);
    dispatch({ type: "watchStopped" });
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
        if (alive && err instanceof ApiError && err.status === 404) dispatch({ type: "missing" });
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
      dispatch({ type: "freed" });
      toast(t("lobby.freed"));
    }
  }, [mode, mySeatRow]);

  async function take(seat) {
    const clean = cleanName(name);
    const problem = nameProblem(clean);
    if (problem) {
      toast(t(problem), "error");
      onBadName();
      return;
    }
    try {
      const s = await ensureSession(clean);
      await api.takeSeat(s.token, code, seat);
      dispatch({ type: "connecting" });
      connect(s.token);
    } catch (err) {
      if (err.code === "already_seated") {
        dispatch({ type: "connecting" });
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
      else if (kind === "fillBots") await api.fillBots(token, code);
      else if (kind === "removeBot") await api.removeBot(token, code, seat);
      else if (kind === "free") await api.leaveSeat(token, code, seat);
      else if (kind === "start") await api.start(token, code);
      else if (kind === "leave") {
        await api.leaveSeat(token, code, seat);
        conn.current?.stop();
        dispatch({ type: "left" });
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

  return {
    mode,
    game,
    status,
    summary,
    name,
    setName,
    flash,
    // Whether the link was ever up: the banner speaks of a lost link, not of the first hello.
    wasOnline: wasOnline.current,
    retryNow: () => conn.current?.retryNow(),
    take,
    lobbyAction,
    watch,
    stopWatching,
    actions,
  };
}
