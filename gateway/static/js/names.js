// Small view helpers shared by the lobby and the table: player names in <bdi>, teams, cards.
import { html } from "./html.js";
import { listText, t, tx } from "./i18n.js";
import { Emoji, hasPicture } from "./emoji.js";

export const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };
export const SUIT_KEY = { S: "suit.S", H: "suit.H", D: "suit.D", C: "suit.C" };

export function seatName(seats, seat) {
  const row = seats?.[seat];
  if (!row || !row.kind) return t("seat.empty");
  // Bots are named by the server in English ("Bot 2"); a bot has no name of its own to keep.
  if (row.kind === "bot") return t("seat.bot", { n: seat + 1 });
  return row.name || t("seat.numbered", { n: seat + 1 });
}

export function Name({ seats, seat }) {
  return html`<bdi class="name">${seatName(seats, seat)}</bdi>`;
}

export function teamLabel(team) {
  return t("team.name", { n: team + 1 });
}

// A catalog sentence with placeholders rendered: names and other values in <bdi>, an emoji
// ({sign}, {emoji}) as its picture.
export function Msg({ k, vars = {} }) {
  return html`${tx(k, vars).map((part) =>
    typeof part === "string"
      ? part
      : hasPicture(part.value)
        ? html`<${Emoji} e=${part.value} />`
        : html`<bdi>${part.value}</bdi>`,
  )}`;
}

export function cardLabel(card) {
  return t("card.label", { rank: t(`rank.${card.rank}`), suit: t(SUIT_KEY[card.suit]) });
}

// The letter printed on a court card or ace follows the language (French R, D, V for roi,
// dame, valet; Haitian Creole W, D, V, L for wa, dam, valè, las); numbers stay digits.
export function face(rank) {
  return /^\d+$/.test(rank) ? rank : t(`face.${rank}`);
}

export function Card({ card, small = false, extra = "" }) {
  if (!card) return html`<span class="card card-empty ${extra}"></span>`;
  const red = card.suit === "H" || card.suit === "D";
  return html`<span
    class="card ${red ? "red" : "black"} ${small ? "small" : ""} ${extra}"
    data-card-id=${card.id}
    data-rank=${card.rank}
    aria-label=${cardLabel(card)}
    role="img"
  >
    <span class="rank" aria-hidden="true">${face(card.rank)}</span>
    <span class="suit" aria-hidden="true">${SUIT_SYMBOL[card.suit]}</span>
  </span>`;
}

export function listTeams(teams) {
  return listText(teams.map(teamLabel));
}

export function revealText(reveal, seats) {
  const who = reveal.by === null || reveal.by === undefined ? "" : seatName(seats, reveal.by);
  let head;
  if (reveal.reason === "quatro") {
    head = t(reveal.correct ? "reveal.quatroRight" : "reveal.quatroWrong", { name: who });
  } else if (reveal.reason === "contre") {
    head = t(reveal.correct ? "reveal.contreRight" : "reveal.contreWrong", {
      name: who,
      team: teamLabel(reveal.target_team),
    });
  } else {
    head = t("reveal.timeout");
  }
  const scored = reveal.scored.length
    ? t("reveal.scored", { n: reveal.scored.length, teams: listTeams(reveal.scored) })
    : t("reveal.noPoints");
  return `${head} ${scored}`;
}

