// Passkeys with the browser's own WebAuthn API (navigator.credentials): add one to your profile,
// and sign in with it on another device to get the same profile (docs/protocol.md, Profiles).
// The server sends WebAuthn's options in JSON with binary fields in base64url; they become
// ArrayBuffers here, and the browser's answer goes back the same way.
import { api, saveSession } from "./api.js";

export function passkeysWork() {
  return typeof window.PublicKeyCredential === "function" && !!navigator.credentials;
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

// The device's label for the passkey: what the profile lists it by.
function deviceLabel() {
  const ua = navigator.userAgent;
  const os = /Android/.test(ua)
    ? "Android"
    : /iPhone|iPad/.test(ua)
      ? "iOS"
      : /Mac/.test(ua)
        ? "Mac"
        : /Windows/.test(ua)
          ? "Windows"
          : "Linux";
  return `${os} · ${new Date().toISOString().slice(0, 10)}`;
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
  return api.addPasskey(token, { challenge_id, credential: credentialJson(cred), label: deviceLabel() });
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
