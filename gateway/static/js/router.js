// Three routes: `/` (home), `/t/{code}` (a table) and `/replay/{table_id}` (a finished table
// played back). The gateway serves the same page at each.

const CODE_RE = /^\/t\/([A-Za-z0-9]{3,12})\/?$/;
const REPLAY_RE = /^\/replay\/([A-Za-z0-9-]{1,64})\/?$/;

export function route() {
  const m = CODE_RE.exec(location.pathname);
  if (m) return { name: "table", code: m[1].toUpperCase() };
  const r = REPLAY_RE.exec(location.pathname);
  return r ? { name: "replay", id: r[1] } : { name: "home" };
}

export function navigate(path) {
  history.pushState(null, "", path);
  window.dispatchEvent(new Event("quatro:navigate"));
}
