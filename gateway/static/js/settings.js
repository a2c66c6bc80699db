// The host's table settings in the lobby (bot level, hints; docs/protocol.md, "settings"), the
// bot level's chip at the table during the match, and the home page's practice table: you and a
// bot partner against relaxed bots, hints on.
import { useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { escapeDetails, useDismiss } from "./popup.js";
import { t } from "./i18n.js";
import { api, loadSession } from "./api.js";
import { errorText } from "./words.js";
import { toast } from "./toast.js";
import { Emoji, ICON } from "./emoji.js";

export const BOT_LEVELS = ["relaxed", "normal", "sharp"];
const DEFAULTS = { bot_level: "normal", hints: true, late_join: "ask" };
export const LATE_JOIN = ["ask", "always", "never"];

const PRACTICE_KEY = "quatro.practice";

// The same create → add bots → settings calls a host makes by hand in the lobby. The start
// waits for this page's welcome (`startPracticeWhenSeated`): a match started with nobody
// connected opens its first round at once (R6), and the newcomer would miss the signing.
export async function startPractice(token) {
  const table = await api.createTable(token, 4, { practice: true });
  try {
    for (const seat of [1, 2, 3]) await api.addBot(token, table.code, seat);
    await api.settings(token, table.code, { bot_level: "relaxed", hints: true });
  } catch (err) {
    err.noRetry = true; // the table exists: trying again would open a second one
    throw err;
  }
  sessionStorage.setItem(PRACTICE_KEY, table.code);
  return table.code;
}

export async function startPracticeWhenSeated(code, welcome) {
  if (sessionStorage.getItem(PRACTICE_KEY) !== code) return;
  if (welcome.table.phase !== "lobby" || welcome.you.seat !== 0) return;
  sessionStorage.removeItem(PRACTICE_KEY);
  try {
    await api.start(loadSession()?.token, code);
  } catch (err) {
    toast(errorText(err), "error");
  }
}

// Whether people may watch, changed by the host at any time (the only setting that may be
// during a match).
export async function allowWatchers(code, on) {
  await changeSettings(code, { watchers: on });
}

// A lobby call over REST, as every setting is (R29); a refusal is said in a toast.
async function changeSettings(code, body) {
  try {
    await api.settings(loadSession()?.token, code, body);
  } catch (err) {
    toast(errorText(err), "error");
  }
}

export function TableSettings({ code, table, isHost }) {
  const settings = table.settings || DEFAULTS;
  const now = t(settings.hints ? "lobby.settingsHintsOn" : "lobby.settingsHintsOff", {
    level: t(`level.${settings.bot_level}`),
  });
  if (!isHost) {
    return html`<p class="hint table-settings-now" data-level=${settings.bot_level} data-hints=${settings.hints ? "on" : "off"}>
      ${now}
    </p>`;
  }
  const change = (body) => changeSettings(code, body);
  return html`<section class="panel table-settings" aria-labelledby="settings-title">
    <h2 id="settings-title">${t("lobby.settings")}</h2>
    <fieldset class="bot-levels">
      <legend>${t("lobby.botLevel")}</legend>
      ${BOT_LEVELS.map(
        (level) => html`<label class="level-choice" key=${level}>
          <input
            type="radio"
            name="bot-level"
            value=${level}
            data-level=${level}
            checked=${settings.bot_level === level}
            onChange=${() => change({ bot_level: level })}
          />
          <span><strong>${t(`level.${level}`)}</strong> <span class="muted">— ${t(`level.${level}Help`)}</span></span>
        </label>`,
      )}
    </fieldset>
    <label class="level-choice">
      <input
        type="checkbox"
        id="hints-toggle"
        checked=${settings.hints}
        onChange=${(e) => change({ hints: e.currentTarget.checked })}
      />
      <span>${t("lobby.hints")}</span>
    </label>
    <label class="level-choice late-join-choice">
      <span>${t("late.setting")}</span>
      <select
        id="late-join"
        value=${settings.late_join ?? "ask"}
        onChange=${(e) => change({ late_join: e.currentTarget.value })}
      >
        ${LATE_JOIN.map(
          (v) => html`<option key=${v} value=${v} selected=${(settings.late_join ?? "ask") === v}>
            ${t(`late.setting.${v}`)}
          </option>`,
        )}
      </select>
    </label>
    <label class="level-choice">
      <input
        type="checkbox"
        id="watchers-toggle"
        checked=${settings.watchers !== false}
        onChange=${(e) => change({ watchers: e.currentTarget.checked })}
      />
      <span>${t("watch.allow")}</span>
    </label>
  </section>`;
}

// Between two matches the host chooses how the next one's bots play, beside "Play again" (the
// engine lets the level change in the lobby and once a match is over, never during one).
export function NextMatchLevel({ table }) {
  if (!table.seats.some((s) => s.kind === "bot")) return null;
  const current = table.settings?.bot_level ?? DEFAULTS.bot_level;
  return html`<div class="next-level" role="group" aria-labelledby="next-level-title">
    <span id="next-level-title">${t("level.nextMatch")}</span>
    ${BOT_LEVELS.map(
      (level) => html`<button
        type="button"
        key=${level}
        data-level=${level}
        aria-pressed=${current === level ? "true" : "false"}
        onClick=${() => current !== level && changeSettings(table.code, { bot_level: level })}
      >
        ${t(`level.${level}`)}
      </button>`,
    )}
  </div>`;
}

// How the bots play, always in sight at a table with bots: a chip at the foot of the ring that,
// opened, says where the level is chosen. The host chooses it in the lobby and between matches
// (a public table has no host): the bots are tuned when a match starts (actors/bots.py) and a
// rated match counts them at one level (engine/ratings.py), so it holds for the whole match.
export function BotLevelChip({ table, isHost, readOnly = false }) {
  const [open, setOpen] = useState(false);
  const chip = useRef(null);
  const summary = useRef(null);
  useDismiss(open, () => setOpen(false), [chip], summary);
  if (!table.seats.some((s) => s.kind === "bot")) return null;
  const level = table.settings?.bot_level ?? DEFAULTS.bot_level;
  const name = t("level.chip", { level: t(`level.${level}`) });
  const face = html`<${Emoji} e=${ICON.bot} label="" /> <span aria-hidden="true">${t(`level.${level}`)}</span>`;
  // A replay is read-only in every part: the level shows, and nothing opens.
  if (readOnly) {
    return html`<span class="level-chip" data-level=${level} role="img" aria-label=${name}>${face}</span>`;
  }
  return html`<details
    class="level-chip"
    data-level=${level}
    ref=${chip}
    open=${open}
    onToggle=${(e) => setOpen(e.currentTarget.open)}
    onKeyDown=${escapeDetails(setOpen, summary)}
  >
    <summary ref=${summary} aria-label=${name}>${face}</summary>
    <p class="level-where">
      ${name}. ${t(table.public ? "level.wherePublic" : isHost ? "level.whereHost" : "level.where")}
    </p>
  </details>`;
}
