// Profiles (issue 36): your own at `/profile` — ratings per table size, the last matches with
// their replays, what others may see, your name, passkeys, deleting it — and another player's
// at `/p/{player_id}`, showing only what its owner chose to show.
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.js";
import { currentLang, listOf, t } from "./i18n.js";
import { api, loadSession, saveSession } from "./api.js";
import { NameField, PagesNav } from "./lobby.js";
import { PasskeySignIn } from "./signin.js";
import { cleanName, errorText } from "./words.js";
import { nameProblem } from "./namecheck.js";
import { navigate } from "./router.js";
import { toast } from "./toast.js";
import { Passkeys } from "./passkeylist.js";
import { GuardSwitch } from "./guard.js";

const SIZES = [4, 6, 8];

// Digits stay Latin in every language (i18n.js, formatNumber): dates too.
// Browsers have no Haitian Creole month names: its dates are written in figures (2/12/2026).
export function day(ms) {
  const lang = currentLang();
  if (lang === "ht") {
    const numeric = { year: "numeric", month: "numeric", day: "numeric" };
    return new Intl.DateTimeFormat("fr", numeric).format(new Date(ms));
  }
  const locale = lang === "ar" ? "ar-u-nu-latn" : lang;
  return new Intl.DateTimeFormat(locale, { dateStyle: "medium" }).format(new Date(ms));
}

// A provisional rating (fewer than ten rated matches at a size, issue 46) is marked as lichess
// marks it, "1032?": the same Latin "?" in every language, inside the figure's own
// left-to-right run.
const PROVISIONAL = "?";

// A rating change as players read it: +12, −8 (a real minus), always left to right; "+12?"
// when the rating is still provisional.
export function Delta({ d, provisional = false }) {
  const text = `${d > 0 ? "+" : d < 0 ? "\u2212" : "\u00b1"}${Math.abs(d)}`;
  return html`<bdi
    dir="ltr"
    class="delta ${d > 0 ? "up" : d < 0 ? "down" : ""}"
    data-delta=${d}
    data-provisional=${provisional ? "yes" : "no"}
    >${text}${provisional ? PROVISIONAL : ""}</bdi
  >`;
}

// A rating as players read it: 1032, or 1032? while provisional.
export function Figure({ value, provisional = false }) {
  return html`<bdi dir="ltr" data-provisional=${provisional ? "yes" : "no"}
    >${value}${provisional ? PROVISIONAL : ""}</bdi
  >`;
}

// What explains the mark wherever it shows: the mark itself, then the page's words.
export function ProvisionalNote({ text }) {
  return html`<p class="muted provisional-note">
    <bdi dir="ltr">${PROVISIONAL}</bdi> ${text}
  </p>`;
}

function go(path) {
  return (e) => {
    e.preventDefault();
    navigate(path);
  };
}

function Ratings({ ratings }) {
  const provisional = SIZES.filter((n) => ratings[String(n)]?.provisional);
  return html`<section class="panel profile-ratings" aria-labelledby="ratings-title">
    <h2 id="ratings-title">${t("profile.ratings")}</h2>
    <table class="standings">
      <thead>
        <tr>
          <th scope="col">${t("profile.tableSize")}</th>
          <th scope="col">${t("board.rating")}</th>
          <th scope="col">${t("board.played")}</th>
          <th scope="col">${t("board.won")}</th>
          <th scope="col">${t("board.rank")}</th>
        </tr>
      </thead>
      <tbody>
        ${SIZES.map((n) => {
          const s = ratings[String(n)];
          return html`<tr data-size=${n}>
            <th scope="row">
              <a href=${`/leaderboard/${n}`} onClick=${go(`/leaderboard/${n}`)}
                >${t("board.size", { n })}</a
              >
            </th>
            ${s
              ? html`<td class="rating" data-rating=${s.rating}>
                    <${Figure} value=${s.rating} provisional=${s.provisional} />
                  </td>
                  <td>${s.played}</td>
                  <td>${s.won}</td>
                  <td>${s.rank ?? "\u2013"}</td>`
              : html`<td colspan="4" class="muted">${t("profile.unrated")}</td>`}
          </tr>`;
        })}
      </tbody>
    </table>
    ${provisional.length > 0 &&
    html`<${ProvisionalNote} text=${t("profile.provisional")} />
      <ul class="to-list">
        ${provisional.map(
          (n) => html`<li data-to-list=${n}>
            ${t("profile.toList", { n: ratings[String(n)].remaining, size: t("board.size", { n }) })}
          </li>`,
        )}
      </ul>`}
  </section>`;
}

// Why a match of the history changed no rating (issues 46 and 47).
const UNRATED_LINE = {
  bots: "profile.unratedBots",
  practice: "profile.unratedPractice",
  same_person: "profile.unratedSamePerson",
  repeated: "profile.unratedRepeated",
};

// A match record keeps a seat's name as the table had it: a bot's ("Bot 3") and a deleted
// player's in the server's English. No player may take a name that reads as a bot's
// (gateway/names.py), so these are read in the page's language.
const BOT_NAME = /^Bot (\d+)$/;
const DELETED_NAME = "deleted player";

function seatName(seat) {
  if (seat.profile) return seat.name;
  const bot = BOT_NAME.exec(seat.name);
  if (bot && Number(bot[1]) === seat.seat + 1) return t("seat.bot", { n: seat.seat + 1 });
  if (seat.name === DELETED_NAME) return t("profile.deletedPlayer");
  return seat.name;
}

// A match's scores, the player's team first ("Won 5 – 2" whichever team they sat in), in the
// page's direction as the table's score chips run: in Arabic the own score stands on the right.
function ownFirst(m) {
  if (m.team === null) return m.scores;
  return [m.scores[m.team], ...m.scores.filter((_, k) => k !== m.team)];
}

// `own`: an empty list on another's profile says nothing about their rated matches (a table
// still open leaves its match out, and ratings may show some played).
function History({ lines, own = true }) {
  return html`<section class="panel profile-history" aria-labelledby="history-title">
    <h2 id="history-title">${t("profile.history")}</h2>
    ${lines.length === 0
      ? html`<p class="muted">${t(own ? "profile.noMatches" : "profile.noMatchesShown")}</p>`
      : html`<ol class="history-lines">
          ${lines.map(
            (m) => html`<li class="history-line ${m.won ? "won" : "lost"}" data-match=${m.match}>
              <span class="when">${day(m.ended_at)}</span>
              <span class="what">
                ${t("board.size", { n: m.players })} ·
                <strong>${t(m.won ? "profile.won" : "profile.lost")}</strong>
                <span class="match-scores">${ownFirst(m).join(" – ")}</span>
                ${m.delta !== null && html`<${Delta} d=${m.delta} provisional=${m.provisional} />`}
                ${m.rated === false &&
                html`<span class="tag unrated" data-unrated=${m.reason ?? ""}
                  >${t(UNRATED_LINE[m.reason] ?? "profile.unratedLine")}</span
                >`}
              </span>
              <span class="who">
                ${listOf(
                  m.seats
                    .filter((s) => s.team === m.team)
                    .map((s) =>
                      s.profile
                        ? html`<a href=${`/p/${s.profile}`} onClick=${go(`/p/${s.profile}`)}
                            ><bdi>${seatName(s)}</bdi></a
                          >`
                        : html`<bdi>${seatName(s)}</bdi>`,
                    ),
                )}
              </span>
              <a
                class="replay-link"
                href=${`/replay/${m.table_id}`}
                onClick=${go(`/replay/${m.table_id}`)}
                >${t("profile.replay")}</a
              >
            </li>`,
          )}
        </ol>`}
  </section>`;
}

function Visibility({ token, me, onChange }) {
  async function set(body) {
    try {
      onChange(await api.changeProfile(token, body));
    } catch (err) {
      toast(errorText(err), "error");
    }
  }
  const link = `/p/${me.player_id}`;
  return html`<section class="panel visibility" aria-labelledby="public-title">
    <h2 id="public-title">${t("profile.public")}</h2>
    <label class="level-choice">
      <input
        type="checkbox"
        id="show-ratings"
        checked=${me.public.ratings}
        onChange=${(e) => set({ ratings: e.currentTarget.checked })}
      />
      <span>${t("profile.showRatings")}</span>
    </label>
    <label class="level-choice">
      <input
        type="checkbox"
        id="show-history"
        checked=${me.public.history}
        onChange=${(e) => set({ history: e.currentTarget.checked })}
      />
      <span>${t("profile.showHistory")}</span>
    </label>
    <p class="muted">
      ${me.public.ratings || me.public.history
        ? html`<a href=${link} id="public-link" onClick=${go(link)}>${t("profile.link")}</a>`
        : t("profile.private")}
    </p>
  </section>`;
}

function Rename({ token, me, onChange }) {
  const [name, setName] = useState(me.name);
  const [error, setError] = useState("");
  async function save(e) {
    e.preventDefault();
    const clean = cleanName(name);
    const problem = nameProblem(clean);
    if (problem) return setError(t(problem));
    setError("");
    try {
      const changed = await api.changeProfile(token, { name: clean });
      const session = loadSession();
      if (session) saveSession({ ...session, name: changed.name });
      localStorage.setItem("quatro.name", changed.name);
      onChange(changed);
      toast(t("profile.saved"));
    } catch (err) {
      setError(err.status === 422 ? t("err.name_refused") : errorText(err));
    }
  }
  return html`<form class="panel rename" onSubmit=${save}>
    <h2>${t("profile.rename")}</h2>
    ${me.name_hidden && html`<p class="error" id="name-hidden">${t("profile.nameHidden")}</p>`}
    <${NameField} id="profile-name" value=${name} onInput=${setName} />
    <button type="submit" class="primary">${t("profile.save")}</button>
    ${error && html`<p class="error" role="alert">${error}</p>`}
  </form>`;
}

// A guest's profile (issue 47) goes a week after its last visit: said, with the way to keep it.
function Guest({ token, me, onChange }) {
  const [busy, setBusy] = useState(false);
  async function keep() {
    setBusy(true);
    try {
      onChange(await api.changeProfile(token, { keep: true }));
      toast(t("profile.kept"));
    } catch (err) {
      toast(errorText(err), "error");
    } finally {
      setBusy(false);
    }
  }
  return html`<section class="panel guest" aria-labelledby="guest-title">
    <h2 id="guest-title">${t("profile.guestTitle")}</h2>
    <p>${t("profile.guestLead", { date: day(me.expires ?? Date.now()) })}</p>
    <button type="button" class="primary" id="keep-profile" disabled=${busy} onClick=${keep}>
      ${t("profile.keep")}
    </button>
  </section>`;
}

function Delete({ token }) {
  const [asking, setAsking] = useState(false);
  async function remove() {
    try {
      await api.deleteProfile(token);
    } catch (err) {
      return toast(errorText(err), "error");
    }
    saveSession(null);
    toast(t("profile.deleted"));
    navigate("/");
  }
  return html`<section class="panel danger" aria-labelledby="delete-title">
    <h2 id="delete-title">${t("profile.deleteTitle")}</h2>
    <p>${t("profile.deleteLead")}</p>
    ${asking
      ? html`<div class="row">
          <button type="button" class="danger" id="delete-confirm" onClick=${remove}>
            ${t("profile.deleteConfirm")}
          </button>
          <button type="button" onClick=${() => setAsking(false)}>${t("profile.cancel")}</button>
        </div>`
      : html`<button type="button" id="delete-profile" onClick=${() => setAsking(true)}>
          ${t("profile.delete")}
        </button>`}
  </section>`;
}

// Your own profile; without a session, how to get one (a first game, or a passkey).
function Mine() {
  const session = loadSession();
  const [me, setMe] = useState(null);
  const [error, setError] = useState("");
  const reload = async () => {
    try {
      setMe(await api.myProfile(session.token));
    } catch (err) {
      setError(errorText(err));
    }
  };
  useEffect(() => {
    if (session) reload();
  }, []);
  if (!session) {
    return html`<section class="profile" aria-labelledby="profile-title">
      <${PagesNav} signedIn=${false} here="/profile" />
      <h1 id="profile-title">${t("profile.title")}</h1>
      <p>${t("profile.noProfile")}</p>
      <${PasskeySignIn} />
      <${GuardSwitch} />
    </section>`;
  }
  if (!me) {
    return html`<section class="profile"><p class=${error ? "error" : "muted"}>${error || t("profile.loading")}</p></section>`;
  }
  return html`<section class="profile" aria-labelledby="profile-title" data-player=${me.player_id}>
    <${PagesNav} signedIn=${true} here="/profile" />
    <h1 id="profile-title"><bdi id="profile-name-shown">${me.name}</bdi></h1>
    <p class="muted">${t("profile.since", { date: day(me.created) })}</p>
    ${!me.lasting && html`<${Guest} token=${session.token} me=${me} onChange=${setMe} />`}
    <${Ratings} ratings=${me.ratings} />
    <${History} lines=${me.history} />
    <${Visibility} token=${session.token} me=${me} onChange=${setMe} />
    <${Rename} token=${session.token} me=${me} onChange=${setMe} />
    <${Passkeys} token=${session.token} keys=${me.passkeys} reload=${reload} day=${day} />
    <${GuardSwitch} />
    <${Delete} token=${session.token} />
  </section>`;
}

function Theirs({ id }) {
  const session = loadSession();
  const [them, setThem] = useState(null);
  const [missing, setMissing] = useState(false);
  const [reported, setReported] = useState(false);
  useEffect(() => {
    api.profile(id).then(setThem, () => setMissing(true));
  }, [id]);
  async function report() {
    try {
      await api.reportName(session.token, id);
      setReported(true);
      toast(t("profile.reported"));
    } catch (err) {
      // A report counts only from a profile of some standing (issue 47): said as such.
      toast(err.status === 403 ? t("profile.reportNeedsStanding") : errorText(err), "error");
    }
  }
  if (missing) {
    return html`<section class="profile"><h1>${t("profile.titleOther")}</h1><p class="muted" id="no-profile">${t("err.unknown_profile")}</p></section>`;
  }
  if (!them) return html`<section class="profile"><p class="muted">${t("profile.loading")}</p></section>`;
  const mine = session?.player_id === id;
  return html`<section class="profile" aria-labelledby="profile-title" data-player=${id}>
    <${PagesNav} signedIn=${!!session} here=${`/p/${id}`} />
    <h1 id="profile-title">
      ${them.name === null ? t("profile.hiddenName") : html`<bdi id="profile-name-shown">${them.name}</bdi>`}
    </h1>
    ${them.ratings && html`<${Ratings} ratings=${them.ratings} />`}
    ${them.history && html`<${History} lines=${them.history} own=${false} />`}
    ${session &&
    !mine &&
    them.name !== null &&
    html`<p>
      <button type="button" class="link" id="report-name" disabled=${reported} onClick=${report}>
        ${t("profile.report")}
      </button>
    </p>`}
  </section>`;
}

export function ProfileRoute({ id }) {
  return id ? html`<${Theirs} id=${id} />` : html`<${Mine} />`;
}
