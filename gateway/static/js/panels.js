// The panels around play: choosing the sign, the reshuffle vote, the reveal and the end of the
// match, plus the emoji grid and a small accessible dialog.
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { reducedMotion } from "./announce.js";
import { html } from "./html.js";
import { Delta, ProvisionalNote } from "./profile.js";
import { t } from "./i18n.js";
import { Card, Msg, Name, listTeams, revealText, seatName, teamLabel } from "./names.js";
import { Countdown } from "./ticking.js";
import { partnerOf } from "./state.js";
import { useFocusRescue } from "./focus.js";
import { Emoji, ICON } from "./emoji.js";
import { navigate } from "./router.js";
import { NextMatchLevel } from "./settings.js";

// `sign`, when given, is marked among the others (the floor's picker shows your team's sign);
// `hint` adds the hints' highlight to it (the player already knows it).
export function EmojiGrid({
  emojis,
  selected,
  onPick,
  disabled = false,
  label,
  sign = null,
  signLabel = "",
  hint = false,
}) {
  function onKeyDown(e) {
    // Arrow keys move between emojis (the grid reads in the page's direction).
    const keys = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: 6, ArrowUp: -6 };
    if (!(e.key in keys)) return;
    const buttons = [...e.currentTarget.querySelectorAll("button")];
    const i = buttons.indexOf(document.activeElement);
    if (i < 0) return;
    let step = keys[e.key];
    if (document.documentElement.dir === "rtl" && Math.abs(step) === 1) step = -step;
    buttons[(i + step + buttons.length) % buttons.length]?.focus();
    e.preventDefault();
  }
  return html`<div class="emoji-grid" role="group" aria-label=${label} onKeyDown=${onKeyDown}>
    ${emojis.map(
      (emoji) => html`<button
        type="button"
        class="emoji ${selected === emoji ? "chosen" : ""} ${sign === emoji ? "team-sign" : ""} ${hint && sign === emoji ? "ours" : ""}"
        data-emoji=${emoji}
        data-team-sign=${sign === emoji ? "yes" : null}
        data-ours=${hint && sign === emoji ? "true" : null}
        aria-pressed=${selected === emoji ? "true" : "false"}
        disabled=${disabled}
        onClick=${() => onPick(emoji)}
      >
        <${Emoji} e=${emoji} />${sign === emoji &&
        html`<span class="visually-hidden"> ${signLabel}</span
          ><span class="sign-mark" aria-hidden="true">★</span>`}
      </button>`,
    )}
  </div>`;
}

// A dialog of the table (Quatro!'s reminder, Contre!'s choice of team, the sign's question). It
// opens over the player's own area, never over the ring (css: .dialog; js/popup.js), and closes
// on Escape and on a press outside it, which its catcher takes: a press meant to close it must
// not also call Contre! behind it. Focus goes back where it was.
export function Dialog({ title, onClose, children }) {
  const ref = useRef(null);
  // Before the paint (js/popup.js says why): a dialog on screen already has focus and its Escape.
  useLayoutEffect(() => {
    const before = document.activeElement;
    ref.current?.querySelector("button")?.focus();
    ref.current?.scrollIntoView({ block: "nearest" });
    const onKey = (e) => e.key === "Escape" && onClose();
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onKey);
      before?.focus?.();
    };
  }, []);
  return html`<div class="backdrop" onClick=${onClose}></div>
    <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="dialog-title" ref=${ref}>
      <h2 id="dialog-title">${title}</h2>
      ${children}
    </div>`;
}

export function SigningPanel({ game, actions }) {
  const tb = game.table;
  const mine = tb.seats[game.you.seat];
  const partner = partnerOf(game.you.seat, tb.players);
  const panel = useRef(null);
  const readyBtn = useRef(null);
  // Until the sign is fixed, the grid; then "I'm ready".
  useFocusRescue(() =>
    tb.sign
      ? readyBtn.current
      : panel.current?.querySelector(".emoji[aria-pressed='true']") ||
        panel.current?.querySelector(".emoji"),
  );
  let whoChose = null;
  if (tb.sign) {
    if (game.signBy === game.you.seat) whoChose = t("sign.byYou");
    else if (game.signBy === partner)
      whoChose = html`<${Msg} k="sign.byPartner" vars=${{ name: seatName(tb.seats, partner) }} />`;
  }
  return html`<section class="signing panel" aria-labelledby="signing-title" ref=${panel}>
    <h2 id="signing-title">${t("sign.title", { n: tb.round })}</h2>
    <p class="hint">${t("sign.hint")}</p>
    ${tb.sign
      ? html`<p class="sign-fixed" role="status">
          ${t("sign.ours")} <span class="big-emoji" data-sign=${tb.sign}><${Emoji} e=${tb.sign} /></span>
          ${whoChose && html` <span class="muted">(${whoChose})</span>`}
        </p>`
      : null}
    <${EmojiGrid}
      emojis=${tb.emojis}
      selected=${tb.sign}
      disabled=${!!tb.sign}
      onPick=${actions.sign}
      label=${t("sign.gridLabel")}
    />
    <div class="row signing-foot">
      <button
        type="button"
        class="primary"
        id="ready-btn"
        ref=${readyBtn}
        aria-disabled=${mine.ready ? "true" : "false"}
        aria-describedby=${tb.sign ? null : "ready-note"}
        onClick=${() => !mine.ready && actions.ready()}
      >
        ${mine.ready ? t("sign.isReady") : t("sign.ready")}
      </button>
      ${tb.deadline &&
      html`<span>${t("sign.opensIn")} <${Countdown} deadline=${tb.deadline} label=${t("status.signingClock")} /></span>`}
    </div>
    <p class="hint ready-note" id="ready-note" role="status">${tb.sign ? "" : t("sign.readyNoSign")}</p>
  </section>`;
}

// A vote that asks this player to answer is on their screen wherever the page is scrolled, before
// its result is (css/banners.css holds it at the top of the screen).
export function VoteBanner({ game, actions }) {
  const tb = game.table;
  const v = tb.vote;
  const me = game.you.seat;
  const answered = v.accepted.includes(me);
  const mayAnswer = !game.replay && v.voters.includes(me) && !answered;
  const waiting = v.voters.length - v.accepted.length;
  return html`<div
    class="banner vote ${mayAnswer ? "asking" : ""}"
    role="region"
    aria-label=${t("vote.title")}
  >
    <span>
      <${Msg} k="vote.asks" vars=${{ name: seatName(tb.seats, v.by) }} />
      ${" "}<${Countdown} deadline=${v.deadline} label=${t("vote.title")} />
    </span>
    ${mayAnswer
      ? html`<span class="row">
          <button type="button" class="primary" data-vote="yes" onClick=${() => actions.vote(true)}>
            ${t("vote.accept")}
          </button>
          <button type="button" data-vote="no" onClick=${() => actions.vote(false)}>
            ${t("vote.refuse")}
          </button>
        </span>`
      : html`<span class="muted">${t("vote.waiting", { n: waiting })}</span>`}
  </div>`;
}

// Why a finished match rated nobody, as the table's `ratings` event says (issue 46).
const UNRATED = {
  bots: "over.unratedBots",
  practice: "over.unratedPractice",
  same_person: "over.unratedSamePerson",
  repeated: "over.unratedRepeated",
  profile: "over.unratedProfile",
};

export function RevealPanel({ game, actions }) {
  const tb = game.table;
  const r = tb.last_reveal;
  // A public (quick-play) table has no host: the pause runs out by itself, and a match over ends
  // there (another is a "Play now" away).
  const isHost = game.you.host === true;
  const n = tb.players;
  const over = tb.phase === "over";
  // (ext) Each rated seat's rating change, once the table told it (after `over`), whether that
  // rating is still provisional; or why the match rated nobody (issue 46).
  const told = over ? tb.ratings : null;
  const deltas = new Map(told ? told.changes.map((c) => [c.seat, c]) : []);
  const provisional = [...deltas.values()].some((c) => c.provisional);
  const ref = useRef(null);
  // A round can end while the page is scrolled down to the emissions: bring the reveal to the
  // player rather than leave it above the screen, with the status bar above it (the scores it
  // changed, the pause's clock), which the reveal at the screen's top had cut off.
  useEffect(() => {
    const bar = ref.current?.closest(".table-page")?.querySelector(".statusbar");
    const title = ref.current?.querySelector("h2");
    if (!bar || !title) return;
    if (bar.getBoundingClientRect().top >= 0 && title.getBoundingClientRect().bottom <= innerHeight) return;
    bar.scrollIntoView({ block: "start", behavior: reducedMotion() ? "auto" : "smooth" });
  }, []);
  return html`<section
    class="reveal panel"
    ref=${ref}
    aria-labelledby="reveal-title"
    data-reason=${r.reason}
  >
    <h2 id="reveal-title" tabindex="-1">${over ? t("over.title") : t("reveal.title")}</h2>
    <p class="reveal-text ${r.correct ? "right" : "wrong"}">${revealText(r, tb.seats)}</p>
    ${over &&
    html`<p class="winners" data-winners=${tb.winners.join(",")}>
      <${Emoji} e=${ICON.winners} label="" /> ${t("over.winners", { n: tb.winners.length, teams: listTeams(tb.winners) })}
    </p>`}
    <div class="reveal-hands">
      ${Array.from({ length: n / 2 }, (_, k) => k).map(
        (k) => html`<div class="reveal-team team-${k} ${r.scored.includes(k) ? "scored" : ""}">
          <h3>
            <span class="team-dot" aria-hidden="true"></span>${teamLabel(k)}
            ${r.signs[k] && html` · ${t("reveal.sign")} <span class="big-emoji" data-sign=${r.signs[k]}><${Emoji} e=${r.signs[k]} /></span>`}
            ${r.scored.includes(k) && html` <span class="tag plus">+1</span>`}
          </h3>
          ${[k, k + n / 2].map(
            (s) => html`<div class="reveal-seat ${r.carres.includes(s) ? "carre" : ""}" data-seat=${s}>
              <span class="reveal-name">
                <${Name} seats=${tb.seats} seat=${s} />
                ${r.by === s && html` <span class="tag caller">${t(`reveal.${r.reason}Tag`)}</span>`}
                ${r.carres.includes(s) && html` <span class="tag carre-tag">${t("reveal.carre")}</span>`}
                ${deltas.has(s) &&
                html` <span class="tag rating-change" data-rating-seat=${s} title=${t("over.ratingChange")}
                  >${t("over.ratingTag")}
                  <${Delta} d=${deltas.get(s).delta} provisional=${deltas.get(s).provisional} /></span>`}
              </span>
              <span class="reveal-cards">
                ${(r.hands[s] || []).map((c) => html`<${Card} card=${c} small=${true} />`)}
              </span>
            </div>`,
          )}
        </div>`,
      )}
    </div>
    ${told?.rated === false &&
    html`<p class="unrated-note" data-unrated=${told.reason ?? ""}>
      ${t(UNRATED[told.reason] ?? "over.unrated")}
    </p>`}
    ${provisional && html`<${ProvisionalNote} text=${t("over.provisional")} />`}
    ${game.replay
      ? null
      : html`<div class="row reveal-foot">
      ${over &&
      deltas.size > 0 &&
      !game.you.watching &&
      html`<a class="button" id="my-profile" href="/profile" onClick=${(e) => (e.preventDefault(), navigate("/profile"))}
        >${t("over.profile")}</a
      >`}
      ${over && tb.table_id &&
      html`<a
        class="button"
        id="watch-replay"
        href=${`/replay/${tb.table_id}`}
        onClick=${(e) => (e.preventDefault(), navigate(`/replay/${tb.table_id}`))}
        >${t("replay.watch")}</a
      >`}
      ${over && tb.tutorial
        ? null
        : over
        ? isHost
          ? html`${!tb.public && html`<${NextMatchLevel} table=${tb} />`}
              <button type="button" class="primary big" id="play-again" onClick=${actions.rematch}>
                ${t("over.again")}
              </button>`
          : html`<span class="muted">${t(tb.public ? "over.public" : "over.waitHost")}</span>`
        : html`${tb.deadline &&
            html`<span>${t("reveal.nextIn")} <${Countdown} deadline=${tb.deadline} label=${t("status.pauseClock")} /></span>`}
            ${isHost
              ? html`<button type="button" class="primary" id="start-now" onClick=${actions.nextRound}>
                  ${t("reveal.startNow")}
                </button>`
              : !tb.public && html`<span class="muted">${t("reveal.hostMay")}</span>`}`}
    </div>`}
  </section>`;
}
