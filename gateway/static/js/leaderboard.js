// Leaderboards (issue 36) at `/leaderboard/{4|6|8}`: one per table size, 20 players a page, best
// first, and your own rank below the page when you are not on it. A player who does not show
// their ratings is ranked like everyone, without a name. Only established players are listed
// (issue 46): your own row, before that, has no rank and says how many rated matches remain.
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { api, loadSession } from "./api.js";
import { PagesNav } from "./lobby.js";
import { Figure } from "./profile.js";
import { errorText } from "./words.js";
import { navigate } from "./router.js";

const SIZES = [4, 6, 8];

// Your own row, hidden from others, still shows you your name: "Hidden player" beside "You"
// read as someone else's row.
function Row({ row, ownName = "" }) {
  const name =
    row.name !== null
      ? html`<bdi>${row.name}</bdi>`
      : row.me && ownName
        ? html`<bdi>${ownName}</bdi> <span class="muted hidden-mine">(${t("board.hiddenMine")})</span>`
        : html`<span class="muted">${t("board.hidden")}</span>`;
  return html`<tr class=${row.me ? "own-row" : ""} data-rank=${row.rank ?? ""} aria-current=${row.me ? "true" : undefined}>
    <td class="rank">${row.rank ?? "\u2013"}</td>
    <th scope="row" class="who">
      ${row.profile
        ? html`<a href=${`/p/${row.profile}`} onClick=${(e) => (e.preventDefault(), navigate(`/p/${row.profile}`))}
            >${name}</a
          >`
        : name}
      ${row.me && html` <span class="tag">${t("board.you")}</span>`}
    </th>
    <td class="rating"><${Figure} value=${row.rating} provisional=${row.provisional} /></td>
    <td>${row.played}</td>
    <td>${row.won}</td>
  </tr>`;
}

export function LeaderboardRoute({ players }) {
  const session = loadSession();
  const [page, setPage] = useState(1);
  const [board, setBoard] = useState(null);
  const [mine, setMine] = useState(null);
  const [error, setError] = useState("");
  useEffect(() => {
    let alive = true;
    setError("");
    api.leaderboard(players, page).then(
      (b) => alive && setBoard(b),
      (err) => alive && setError(errorText(err)),
    );
    if (session) {
      api.myRank(session.token, players).then(
        (r) => alive && setMine(r),
        () => {},
      );
    }
    return () => {
      alive = false;
    };
  }, [players, page]);
  const onPage = board && mine && board.rows.some((r) => r.rank === mine.rank);
  return html`<section class="leaderboard" aria-labelledby="board-title" data-size=${players}>
    <${PagesNav} signedIn=${!!session} here="/leaderboard" />
    <h1 id="board-title">${t("board.title")}</h1>
    <nav class="row board-sizes" aria-label=${t("profile.tableSize")}>
      ${SIZES.map(
        (n) => html`<a
          class="button"
          href=${`/leaderboard/${n}`}
          aria-current=${n === players ? "page" : undefined}
          data-board-size=${n}
          onClick=${(e) => (e.preventDefault(), setPage(1), navigate(`/leaderboard/${n}`))}
          >${t("board.size", { n })}</a
        >`,
      )}
    </nav>
    ${session &&
    html`<p class="my-rank" id="my-rank">
      ${!mine
        ? t("board.notRanked")
        : mine.rank === null
          ? t("board.notListed", { n: mine.remaining })
          : t("board.yourRank", { rank: mine.rank, rating: mine.rating })}
    </p>`}
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${board &&
    (board.total === 0
      ? html`<p class="muted">${t("board.empty")}</p>`
      : html`<table class="board">
          <thead>
            <tr>
              <th scope="col">${t("board.rank")}</th>
              <th scope="col">${t("board.player")}</th>
              <th scope="col">${t("board.rating")}</th>
              <th scope="col">${t("board.played")}</th>
              <th scope="col">${t("board.won")}</th>
            </tr>
          </thead>
          <tbody>
            ${board.rows.map(
              (row) => html`<${Row}
                  key=${row.rank}
                  row=${{ ...row, me: row.me || row.rank === mine?.rank }}
                  ownName=${session?.name}
                />`,
            )}
            ${mine && !onPage && html`<tr class="gap" aria-hidden="true"><td colspan="5">…</td></tr><${Row} row=${mine} ownName=${session?.name} />`}
          </tbody>
        </table>`)}
    ${board &&
    board.pages > 1 &&
    html`<nav class="row pager" aria-label=${t("board.pages")}>
      <button type="button" id="board-prev" disabled=${page <= 1} onClick=${() => setPage(page - 1)}>
        ${t("board.prev")}
      </button>
      <span>${t("board.page", { page, pages: board.pages })}</span>
      <button type="button" id="board-next" disabled=${page >= board.pages} onClick=${() => setPage(page + 1)}>
        ${t("board.next")}
      </button>
    </nav>`}
  </section>`;
}
