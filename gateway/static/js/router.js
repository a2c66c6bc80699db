// Two routes: `/` (home) and `/t/{code}` (a table). The gateway serves the same page at both.

const CODE_RE = /^\/t\/([A-Za-z0-9]{3,12})\/?$/;

export function route() {
  const m = CODE_RE.exec(location.pathname);
  return m ? { name: "table", code: m[1].toUpperCase() } : { name: "home" };
}

export function navigate(path) {
  history.pushState(null, "", path);
  window.dispatchEvent(new Event("quatro:navigate"));
}
