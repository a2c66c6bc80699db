// A finished match played back, `/replay/{table_id}`: the events of GET /api/replays/{table_id}
// fed to the same reducer and drawn by the same table as a live game. Everyone's view by default
// (what a spectator saw); a player of the table may switch to their own seat's view (their hands
// and their team's sign, as they saw them). Play/pause, speed, and a scrubber over the events.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { listOf, t } from "./i18n.js";
import { api, ApiError, loadSession } from "./api.js";
import { fromWelcome, reduce } from "./state.js";
import { TableView } from "./table.js";
import { errorText } from "./words.js";
import { navigate } from "./router.js";
import { noteServerTime } from "./servertime.js";
import { announce } from "./announce.js";
import { revealText } from "./names.js";
import { Emoji, ICON } from "./emoji.js";

export const SPEEDS = [1, 2, 4, 8];
// A replay keeps the table's rhythm, but a wait longer than this (a pause nobody cut short, a
// round of slow thinking) is shortened to it, at 1×.
const LONGEST_WAIT_MS = 1500;

// Every state of the table, from the empty table to after the last event: states[i] is the
// table once events[0..i-1] are applied.
export function statesOf(data) {
  const seat = data.seat;
  const you =
    seat === null
      ? { player_id: null, seat: null, team: null, host: false, watching: true }
      : { player_id: null, seat, team: seat % (data.players / 2), host: false, watching: false };
  let state = fromWelcome({ you, table: data.start }, null);
  const states = [state];
  for (const ev of data.events) {
    state = reduce(state, ev);
    states.push(state);
  }
  return states;
}

// The range of positions a match is played over: from its first deal's signing (the lobby
// before it shows nothing of the match) to its `over`.
function spanOf(data, match) {
  const { first, last } = data.matches[match];
  let from = first;
  while (from < last && data.events[from].type !== "signing") from += 1;
  return { from: from + 1, to: last + 1 };
}

// The position of a match showing the table as it stood at `at` (a moment of the other view,
// whose events differ: the own view adds its private ones), or the match's first.
function positionAt(data, span, at) {
  let pos = span.from;
  while (at !== undefined && pos < span.to && data.events[pos].at <= at) pos += 1;
  return pos;
}

export function ReplayRoute({ id }) {
  const [data, setData] = useState(null);
  const [failure, setFailure] = useState(null);
  const [own, setOwn] = useState(false);
  // Switching views loads the other view's events and draws them anew: the speed chosen and the
  // moment shown ({match, at}) stay as they were.
  const [speed, setSpeed] = useState(1);
  const moment = useRef(null);
  const session = loadSession();

  useEffect(() => {
    let alive = true;
    setData(null);
    api
      .replay(id, own ? session?.token : null)
      .then((d) => alive && setData(d))
      .catch((err) => {
        if (!alive) return;
        if (own) {
          setOwn(false);
          setFailure((before) => ({ code: before?.code, toast: errorText(err) }));
        } else setFailure((before) => ({ ...before, code: err instanceof ApiError ? err.code : "generic" }));
      });
    return () => {
      alive = false;
    };
  }, [id, own]);

  if (failure?.code) {
    const key = {
      not_finished: "replay.notFinished",
      unknown_replay: "replay.missing",
      watching_off: "replay.private",
    }[failure.code];
    // A table closed to watchers has no public replay; a player of it still has their own.
    const ownInstead = failure.code === "watching_off" && session;
    return html`<section class="panel center-text" role="alert">
      <h1>${t("replay.title")}</h1>
      <p>${key ? t(key) : errorText(failure)}</p>
      ${failure.toast && html`<p class="hint">${failure.toast}</p>`}
      ${ownInstead &&
      html`<button type="button" id="replay-own-instead" onClick=${() => (setFailure(null), setOwn(true))}>
        ${t("replay.showOwn")}
      </button>`}
      <button type="button" onClick=${() => navigate("/")}>${t("nav.home")}</button>
    </section>`;
  }
  if (!data) return html`<p class="loading" role="status">${t("replay.loading")}</p>`;
  return html`<${Player}
    key=${`${data.view}-${data.events.length}`}
    data=${data}
    own=${own}
    canOwn=${Boolean(session)}
    onOwn=${(v) => (setFailure(null), setOwn(v))}
    notice=${failure?.toast}
    speed=${speed}
    setSpeed=${setSpeed}
    moment=${moment}
  />`;
}

function Player({ data, own, canOwn, onOwn, notice, speed, setSpeed, moment }) {
  const states = useMemo(() => statesOf(data), [data]);
  const [match, setMatch] = useState(() =>
    Math.min(moment.current?.match ?? data.matches.length - 1, data.matches.length - 1),
  );
  const span = spanOf(data, match);
  const [pos, setPos] = useState(() => positionAt(data, span, moment.current?.at));
  const [playing, setPlayingState] = useState(false);
  moment.current = { match, at: data.events[pos - 1]?.at };
  const timer = useRef(null);
  // Whether the replay runs, as of now: read by a move's timer when it fires. Clearing the
  // timer on pause is not enough, since a render that is still to come may arm the next one
  // (its effect was captured while playing) after the pause: seen as one move more on a
  // loaded machine.
  const running = useRef(false);
  function setPlaying(on) {
    running.current = on;
    setPlayingState(on);
  }

  // The countdowns read the server's clock: in a replay, the clock of the moment shown.
  const at = data.events[Math.max(0, pos - 1)]?.at;
  noteServerTime(at, { reset: true });
  // Paused, the clocks stand still at that moment.
  useEffect(() => {
    if (playing) return undefined;
    const id = setInterval(() => noteServerTime(at, { reset: true }), 100);
    return () => clearInterval(id);
  }, [playing, at]);

  useEffect(() => {
    clearTimeout(timer.current);
    if (!playing) return undefined;
    if (pos >= span.to) {
      setPlaying(false);
      return undefined;
    }
    const gap = (data.events[pos]?.at ?? 0) - (data.events[pos - 1]?.at ?? 0);
    const wait = Math.min(Math.max(gap, 0), LONGEST_WAIT_MS) / speed;
    timer.current = setTimeout(() => {
      if (running.current) setPos((p) => Math.min(p + 1, span.to));
    }, wait);
    return () => clearTimeout(timer.current);
  }, [playing, pos, speed, match]);

  // What a live table says aloud when a round ends, said here too.
  useEffect(() => {
    const ev = data.events[pos - 1];
    if (playing && ev?.type === "reveal") announce(revealText(ev, states[pos].table.seats));
  }, [pos]);

  function pickMatch(m) {
    setMatch(m);
    setPlaying(false);
    setPos(spanOf(data, m).from);
  }

  const game = { ...states[pos], replay: true };
  // (ext) The match's human players as its record keeps them, linked to the profiles that show
  // something. Bots are the seats named as the engine names them, a name no player may take
  // (gateway/names.py).
  const lineup = (data.lineups || [])[match]?.filter((s) => !/^Bot \d+$/.test(s.name));
  const total = span.to - span.from;
  const step = pos - span.from;
  // Compact, so that a phone's ring keeps its height with a hand drawn above (the own view): the
  // title beside the players, the position beside the scrubber.
  const controls = html`<section class="me replay-controls" aria-labelledby="replay-title">
    <div class="replay-head">
    <h2 id="replay-title">${t("replay.title")}</h2>
    ${lineup &&
    html`<p class="replay-players" id="replay-players">
      ${t("replay.players")}${" "}${listOf(
        lineup.map((s) =>
          s.profile
            ? html`<a href=${`/p/${s.profile}`} data-profile=${s.profile} onClick=${(e) => (e.preventDefault(), navigate(`/p/${s.profile}`))}
                ><bdi>${s.name}</bdi></a
              >`
            : html`<bdi>${s.name}</bdi>`,
        ),
      )}
    </p>`}
    </div>
    <p class="hint">${t(data.view === "own" ? "replay.ownLead" : "replay.publicLead")}</p>
    ${notice && html`<p class="hint" role="alert">${notice}</p>`}
    <div class="row replay-row">
      <button
        type="button"
        class="primary"
        id="replay-play"
        aria-pressed=${playing ? "true" : "false"}
        onClick=${() => {
          // Pausing stops the next move now: the effect that would clear its timer runs only
          // after the next paint, and the move could land in between.
          if (playing) clearTimeout(timer.current);
          if (!playing && pos >= span.to) setPos(span.from);
          setPlaying(!playing);
        }}
      >
        <${Emoji} e=${playing ? ICON.pause : ICON.play} label="" /> ${t(playing ? "replay.pause" : "replay.play")}
      </button>
      <label class="replay-speed">
        ${t("replay.speed")}
        <select
          id="replay-speed"
          value=${String(speed)}
          onChange=${(e) => setSpeed(Number(e.currentTarget.value))}
        >
          ${SPEEDS.map((s) => html`<option value=${String(s)}>${t("replay.times", { n: s })}</option>`)}
        </select>
      </label>
      ${data.matches.length > 1 &&
      html`<label class="replay-match">
        ${t("replay.matchLabel")}
        <select id="replay-match" value=${String(match)} onChange=${(e) => pickMatch(Number(e.currentTarget.value))}>
          ${data.matches.map((_, m) => html`<option value=${String(m)}>${t("replay.match", { n: m + 1 })}</option>`)}
        </select>
      </label>`}
    </div>
    <div class="replay-scrub-row">
    <label class="replay-scrub" for="replay-scrubber">
      <span id="replay-position">${t("replay.position", { n: step, total })}</span>
    </label>
    <input
      type="range"
      id="replay-scrubber"
      min=${span.from}
      max=${span.to}
      step="1"
      value=${pos}
      aria-valuetext=${t("replay.position", { n: step, total })}
      onInput=${(e) => {
        setPlaying(false);
        setPos(Number(e.currentTarget.value));
      }}
    />
    </div>
    <div class="row">
      ${canOwn &&
      html`<button type="button" id="replay-view" aria-pressed=${own ? "true" : "false"} onClick=${() => onOwn(!own)}>
        ${t(own ? "replay.showPublic" : "replay.showOwn")}
      </button>`}
      <button type="button" id="replay-home" onClick=${() => navigate("/")}>${t("nav.home")}</button>
    </div>
  </section>`;
  return html`<div class="replay" data-pos=${pos} data-view=${data.view}>
    <${TableView} game=${game} actions=${NO_ACTIONS} flash=${null} status="replay" controls=${controls} />
  </div>`;
}

// A replay plays for nobody.
const nothing = async () => null;
const NO_ACTIONS = {
  swap: nothing,
  emit: nothing,
  send: nothing,
  ready: nothing,
  sign: nothing,
  floor: nothing,
  quatro: nothing,
  contre: nothing,
  voteRequest: nothing,
  vote: nothing,
  nextRound: nothing,
  rematch: nothing,
};
