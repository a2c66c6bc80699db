// Quatro's service worker: the client's shell kept for offline use, and nothing else. The gateway
// serves it at /sw.js with `const SHELL = { version, files: [{ url, digest }] }` written before
// this text (gateway/client_page.py): every file of the client under the URL the page asks for
// it by, the page itself under "/". Rules (gateway/static/README.md):
//
// - Only the URLs of that list and the app's own pages are answered here; everything else —
//   /api (table state, sessions, replays), the WebSocket, metrics — goes to the network as if
//   there were no worker, and nothing of it is ever stored.
// - A page (`/`, `/t/…`, `/replay/…`, `/profile`, `/p/…`, `/leaderboard…`: the addresses of
//   js/router.js) comes from the network first, so a deploy reaches players
//   on their next load; only when the network fails (offline, or a gateway answering 5xx while
//   it restarts) is the kept page served, with the files of its own version.
// - One cache per version, named by it; a new worker fills its own (checking each answer's
//   ETag against the digest listed, so a rolling deploy cannot mix two versions in it), then
//   takes over and deletes the others. A page already open keeps running on the modules it
//   loaded (all of them, at start); its next load is the new version.

const CACHE = `quatro-shell-${SHELL.version}`;
const KEPT = new Map(SHELL.files.map((f) => [f.url, f.digest]));
const PAGE_ROUTES = /^\/(?:t\/[^/]+|replay\/[^/]+|profile|p\/[^/]+|leaderboard(?:\/[^/]+)?)?\/?$/;
// A page slower than this from the network is served from the cache: a player on a dying
// connection sees the table's shell (and its link state) rather than a blank tab.
const PAGE_TIMEOUT_MS = 5000;

function sameVersion(response, digest) {
  const tag = (response.headers.get("etag") || "").replace(/^W\//, "").replace(/"/g, "");
  return tag.split("-")[0] === digest;
}

async function keep(cache, url, digest) {
  // Versioned URLs may come from the HTTP cache (they never change); the others are checked.
  const response = await fetch(url, { cache: url.includes("?v=") ? "default" : "no-cache" });
  if (!response.ok || !sameVersion(response, digest)) {
    throw new Error(`${url}: got ${response.status} ${response.headers.get("etag")}, want ${digest}`);
  }
  await cache.put(url, response);
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      try {
        await Promise.all(SHELL.files.map((f) => keep(cache, f.url, f.digest)));
      } catch (err) {
        // Half a version is no use offline: the browser tries this worker again on a later visit.
        await caches.delete(CACHE);
        throw err;
      }
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith("quatro-") && name !== CACHE) await caches.delete(name);
      }
      if (self.registration.navigationPreload) await self.registration.navigationPreload.enable();
      await self.clients.claim();
    })(),
  );
});

async function kept(url) {
  const cache = await caches.open(CACHE);
  return cache.match(url);
}

async function page(event) {
  const fromNetwork = (async () => (await event.preloadResponse) || fetch(event.request))();
  fromNetwork.catch(() => {}); // when the timeout wins, its failure has nobody to tell
  const late = new Promise((resolve) => setTimeout(resolve, PAGE_TIMEOUT_MS, null));
  try {
    const response = await Promise.race([fromNetwork, late]);
    if (response && response.status < 500) return response;
  } catch {
    // offline: the kept page below
  }
  const shell = await kept("/");
  if (shell) return shell;
  return fromNetwork; // nothing kept yet: the browser's own answer, error page included
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate" && PAGE_ROUTES.test(url.pathname)) {
    event.respondWith(page(event));
    return;
  }
  const key = url.pathname + url.search;
  if (!KEPT.has(key)) return;
  // A help page is a navigation too: its preload (if any) must be awaited, or Chrome warns.
  event.respondWith(
    (async () => (await kept(key)) || (await event.preloadResponse) || fetch(request))(),
  );
});
