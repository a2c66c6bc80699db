// The routes: `/` (home), `/t/{code}` (a table), `/replay/{table_id}` (a finished table played
// back), and (issue 36) `/profile` (your own), `/p/{player_id}` (another's) and `/leaderboard`
// or `/leaderboard/{4|6|8}`. Anything else is "missing": nothing is there.
//
// ROUTES is every address the client draws a page at. The gateway serves the page at each, and
// answers 404 elsewhere (gateway/routes/pages.py holds the same shapes; tests/browser/
// test_addresses.py checks the two agree, and walks every address the client pushes by reload
// and in a new tab). An address added here is added there.

// A code as typed in the join form (any length up to 12): its table page says when none has it.
export const ROUTES = [
  { name: "home", re: /^\/$/, of: () => ({}) },
  { name: "table", re: /^\/t\/([A-Za-z0-9]{1,12})\/?$/, of: (m) => ({ code: m[1].toUpperCase() }) },
  { name: "replay", re: /^\/replay\/([A-Za-z0-9-]{1,64})\/?$/, of: (m) => ({ id: m[1] }) },
  { name: "profile", re: /^\/profile\/?$/, of: () => ({ id: null }) },
  { name: "profile", re: /^\/p\/(p-[0-9a-f]{32})\/?$/, of: (m) => ({ id: m[1] }) },
  { name: "leaderboard", re: /^\/leaderboard(?:\/([468]))?\/?$/, of: (m) => ({ players: Number(m[1] || 4) }) },
];

export function route(path = location.pathname) {
  for (const r of ROUTES) {
    const m = r.re.exec(path);
    if (m) return { name: r.name, ...r.of(m) };
  }
  return { name: "missing" };
}

export function navigate(path) {
  history.pushState(null, "", path);
  window.dispatchEvent(new Event("quatro:navigate"));
}
