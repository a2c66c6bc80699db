// REST calls of PROTOCOL.md, and the browser's session (token kept in localStorage, so a reload
// or a come-back keeps the seat).

const SESSION_KEY = "quatro.session";
const NAME_KEY = "quatro.name";

export class ApiError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message || code);
    this.status = status;
    this.code = code;
    // Seconds the server asked us to wait (`Retry-After` of a 429 or 503), or null.
    this.retryAfter = retryAfter;
  }
}

// `Retry-After` is either seconds or an HTTP date (RFC 9110); anything else counts as absent.
export function retryAfterSeconds(value, now = Date.now()) {
  if (value === null || value === undefined || value === "") return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

export function loadSession() {
  try {
    const s = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
    return s && typeof s.token === "string" ? s : null;
  } catch {
    return null;
  }
}

export function saveSession(s) {
  if (s) localStorage.setItem(SESSION_KEY, JSON.stringify(s));
  else localStorage.removeItem(SESSION_KEY);
}

export function rememberedName() {
  return localStorage.getItem(NAME_KEY) || "";
}

async function call(method, path, { body, token } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network", "");
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = data && data.error;
    throw new ApiError(
      res.status,
      err?.code || `http_${res.status}`,
      err?.message || "",
      retryAfterSeconds(res.headers.get("Retry-After")),
    );
  }
  return data;
}

// A session for this name: reuse the stored one when the name is unchanged.
export async function ensureSession(name) {
  const current = loadSession();
  if (current && current.name === name) return current;
  let s;
  try {
    s = await call("POST", "/api/sessions", { body: { name } });
  } catch (err) {
    // The one thing a new session can find wrong in a well-formed request is the name.
    if (err.status === 422) throw new ApiError(422, "name_refused", err.message);
    throw err;
  }
  localStorage.setItem(NAME_KEY, name);
  saveSession(s);
  return s;
}

export const api = {
  createTable(token, players, { practice = false } = {}) {
    const body = { players };
    // (ext) A practice table's matches change nobody's rating.
    if (practice) body.practice = true;
    // A rigged deal for browser tests; the server refuses it unless QUATRO_TEST_HOOKS=1.
    const scenario = sessionStorage.getItem("quatro.scenario");
    if (scenario) body.scenario = JSON.parse(scenario);
    return call("POST", "/api/tables", { body, token });
  },
  // (ext) The guided round: a tutorial table with the caller as its learner -> {code, …}; and
  // the learner leaving it (its match ends, the seat is forgotten).
  startTutorial: (token, body = {}) => call("POST", "/api/tutorial", { body, token }),
  endTutorial: (token, code) =>
    call("DELETE", `/api/tutorial/${encodeURIComponent(code)}`, { token }),
  // (ext) Quick play: a seat at a public table of `players` seats -> {code, table_id, seat, players}.
  quickPlay: (token, players) => call("POST", "/api/quickplay", { body: { players }, token }),
  table: (code) => call("GET", `/api/tables/${encodeURIComponent(code)}`),
  myTables: (token) => call("GET", "/api/sessions/tables", { token }),
  takeSeat: (token, code, seat) =>
    call("POST", `/api/tables/${encodeURIComponent(code)}/seats/${seat}`, { token }),
  leaveSeat: (token, code, seat) =>
    call("DELETE", `/api/tables/${encodeURIComponent(code)}/seats/${seat}`, { token }),
  addBot: (token, code, seat) =>
    call("POST", `/api/tables/${encodeURIComponent(code)}/bots`, { body: { seat }, token }),
  // (ext) A bot in every empty seat, in one call -> {seats: [the seats filled]}.
  fillBots: (token, code) =>
    call("POST", `/api/tables/${encodeURIComponent(code)}/fill`, { token }),
  removeBot: (token, code, seat) =>
    call("DELETE", `/api/tables/${encodeURIComponent(code)}/bots/${seat}`, { token }),
  settings: (token, code, body) =>
    call("PATCH", `/api/tables/${encodeURIComponent(code)}/settings`, { body, token }),
  // Joining late: ask for a bot's seat during the match, withdraw, and the host's answer.
  claim: (token, code, seat) =>
    call("POST", `/api/tables/${encodeURIComponent(code)}/claims/${seat}`, { token }),
  cancelClaim: (token, code) =>
    call("DELETE", `/api/tables/${encodeURIComponent(code)}/claims/mine`, { token }),
  answerClaim: (token, code, seat, accept) =>
    call("PATCH", `/api/tables/${encodeURIComponent(code)}/claims/${seat}`, {
      body: { accept },
      token,
    }),
  start: (token, code) => call("POST", `/api/tables/${encodeURIComponent(code)}/start`, { token }),
  // (ext) Profiles, leaderboards, passkeys (issue 36).
  myProfile: (token) => call("GET", "/api/profiles/me", { token }),
  changeProfile: (token, body) => call("PATCH", "/api/profiles/me", { body, token }),
  deleteProfile: (token) => call("DELETE", "/api/profiles/me", { token }),
  profile: (id) => call("GET", `/api/profiles/${encodeURIComponent(id)}`),
  reportName: (token, id) =>
    call("POST", `/api/profiles/${encodeURIComponent(id)}/report`, { token }),
  leaderboard: (players, page) => call("GET", `/api/leaderboards/${players}?page=${page}`),
  myRank: (token, players) => call("GET", `/api/leaderboards/${players}/me`, { token }),
  passkeyOptions: (token) => call("POST", "/api/passkeys/options", { token }),
  addPasskey: (token, body) => call("POST", "/api/passkeys", { body, token }),
  renamePasskey: (token, id, label) =>
    call("PATCH", `/api/passkeys/${encodeURIComponent(id)}`, { body: { label }, token }),
  removePasskey: (token, id) =>
    call("DELETE", `/api/passkeys/${encodeURIComponent(id)}`, { token }),
  signInOptions: () => call("POST", "/api/passkeys/sign-in/options"),
  signIn: (body) => call("POST", "/api/passkeys/sign-in", { body }),
  // A finished table's events: everyone's view, or with a token the caller's own seat's.
  replay: (id, token) =>
    call("GET", `/api/replays/${encodeURIComponent(id)}${token ? "?view=own" : ""}`, { token }),
};
