// Passkeys with the browser's own WebAuthn API (navigator.credentials): add one to your profile,
// and sign in with it on another device to get the same profile (docs/protocol.md, Profiles).
// The server sends WebAuthn's options in JSON with binary fields in base64url; they become
// ArrayBuffers here, and the browser's answer goes back the same way.
import { api, saveSession } from "./api.js";

// Why this page cannot use a passkey (a catalog key, said to the player instead of offering
// one), or null when it can. A browser gives passkeys only to a secure context (https, or
// localhost) whose host can be a relying party: a domain name or `localhost`, never an IP
// address, where Chromium refuses the ceremony ("This is an invalid domain") after the prompt.
export function passkeyProblem(where = window.location, win = window) {
  if (!win.isSecureContext) return "passkey.needsHttps";
  if (ipAddress(where.hostname)) return "passkey.needsName";
  if (typeof win.PublicKeyCredential !== "function" || !win.navigator.credentials) {
    return "passkey.unsupported";
  }
  return null;
}

// URLs write IPv4 in four decimal parts (a browser rewrites 127.1 so) and IPv6 in brackets.
function ipAddress(hostname) {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname) || hostname.startsWith("[");
}

export function passkeysWork() {
  return passkeyProblem() === null;
}

function fromB64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(b64 + "===".slice((b64.length + 3) % 4));
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out.buffer;
}

function toB64url(buffer) {
  const bytes = new Uint8Array(buffer);
  let raw = "";
  for (const b of bytes) raw += String.fromCharCode(b);
  return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function creationOptions(o) {
  return {
    ...o,
    challenge: fromB64url(o.challenge),
    user: { ...o.user, id: fromB64url(o.user.id) },
    excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) })),
  };
}

function requestOptions(o) {
  return {
    ...o,
    challenge: fromB64url(o.challenge),
    allowCredentials: (o.allowCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) })),
  };
}

function credentialJson(cred) {
  const r = cred.response;
  const response = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64url(r.attestationObject);
    response.transports = typeof r.getTransports === "function" ? r.getTransports() : [];
  } else {
    response.authenticatorData = toB64url(r.authenticatorData);
    response.signature = toB64url(r.signature);
    if (r.userHandle) response.userHandle = toB64url(r.userHandle);
  }
  return {
    id: cred.id,
    rawId: toB64url(cred.rawId),
    type: cred.type,
    response,
    clientExtensionResults: cred.getClientExtensionResults?.() ?? {},
    authenticatorAttachment: cred.authenticatorAttachment ?? null,
  };
}

// The label a new passkey is listed by: the browser and the platform it was made on (and a
// phone's model where the browser tells it), so that the owner tells their devices apart. From
// the browser's client hints where it has them (Chromium's `navigator.userAgentData`), else
// from its user agent. The server numbers it when another of the player's reads alike.
export async function deviceLabel(nav = navigator) {
  const hints = nav.userAgentData;
  let browser = hints ? brandOf(hints.brands || []) : null;
  let platform = hints?.platform || null;
  let model = "";
  if (hints?.getHighEntropyValues) {
    try {
      model = (await hints.getHighEntropyValues(["model"])).model || "";
    } catch {
      model = ""; // a browser may refuse high-entropy hints: the rest still tells devices apart
    }
  }
  browser ||= browserOf(nav.userAgent);
  platform ||= platformOf(nav.userAgent);
  const where = model ? `${platform} (${model})` : platform;
  return [browser, where].filter(Boolean).join(" · ").slice(0, 40);
}

// A brand list holds made-up "greasing" names ("Not_A Brand") and the engine ("Chromium") beside
// the browser's own: the browser's, by the name people know it by.
const BRANDS = { "Google Chrome": "Chrome", "Microsoft Edge": "Edge" };
function brandOf(brands) {
  const names = brands.map((b) => b.brand).filter((name) => !/not.?a.?brand/i.test(name));
  const own = names.find((name) => name !== "Chromium") || names[0];
  return own ? BRANDS[own] || own : null;
}

function browserOf(ua) {
  for (const [re, name] of [
    [/Edg\//, "Edge"],
    [/OPR\//, "Opera"],
    [/Firefox\//, "Firefox"],
    [/Chrome\//, "Chrome"],
    [/Safari\//, "Safari"],
  ]) {
    if (re.test(ua)) return name;
  }
  return "";
}

function platformOf(ua) {
  for (const [re, name] of [
    [/Android/, "Android"],
    [/iPhone/, "iPhone"],
    [/iPad/, "iPad"],
    [/CrOS/, "ChromeOS"],
    [/Mac OS X|Macintosh/, "macOS"],
    [/Windows/, "Windows"],
    [/Linux/, "Linux"],
  ]) {
    if (re.test(ua)) return name;
  }
  return "";
}

// A refusal the player caused (the prompt closed, no passkey chosen): nothing to report.
export class PasskeyCancelled extends Error {}

export async function addPasskey(token) {
  const { challenge_id, options } = await api.passkeyOptions(token);
  let cred;
  try {
    cred = await navigator.credentials.create({ publicKey: creationOptions(options) });
  } catch (err) {
    throw new PasskeyCancelled(err?.name || "cancelled");
  }
  if (!cred) throw new PasskeyCancelled("cancelled");
  const label = (await deviceLabel()) || undefined;
  return api.addPasskey(token, { challenge_id, credential: credentialJson(cred), label });
}

// Signs in with a passkey of this site: the session it gets is saved like a new player's, so the
// rest of the client (tables, reconnects) uses it as it always did.
export async function signInWithPasskey() {
  const { challenge_id, options } = await api.signInOptions();
  let cred;
  try {
    cred = await navigator.credentials.get({ publicKey: requestOptions(options) });
  } catch (err) {
    throw new PasskeyCancelled(err?.name || "cancelled");
  }
  if (!cred) throw new PasskeyCancelled("cancelled");
  const session = await api.signIn({ challenge_id, credential: credentialJson(cred) });
  saveSession(session);
  localStorage.setItem("quatro.name", session.name);
  return session;
}
