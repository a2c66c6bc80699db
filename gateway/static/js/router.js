// The routes: `/` (home), `/t/{code}` (a table), `/replay/{table_id}` (a finished table played
// back), and (issue 36) `/profile` (your own), `/p/{player_id}` (another's) and
// `/leaderboard/{4|6|8}`. The gateway serves the same page at each.

const CODE_RE = /^\/t\/([A-Za-z0-9]{3,12})\/?$/;
const REPLAY_RE = /^\/replay\/([A-Za-z0-9-]{1,64})\/?$/;
const PROFILE_RE = /^\/p\/(p-[0-9a-f]{32})\/?$/;
const BOARD_RE = /^\/leaderboard(?:\/([468]))?\/?$/;

export function route() {
  const path = location.pathname;
  const m = CODE_RE.exec(path);
  if (m) return { name: "table", code: m[1].toUpperCase() };
  const r = REPLAY_RE.exec(path);
  if (r) return { name: "replay", id: r[1] };
  if (/^\/profile\/?$/.test(path)) return { name: "profile", id: null };
  const p = PROFILE_RE.exec(path);
  if (p) return { name: "profile", id: p[1] };
  const b = BOARD_RE.exec(path);
  if (b) return { name: "leaderboard", players: Number(b[1] || 4) };
  return { name: "home" };
}

export function navigate(path) {
  history.pushState(null, "", path);
  window.dispatchEvent(new Event("quatro:navigate"));
}
