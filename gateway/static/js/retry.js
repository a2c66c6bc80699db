// Trying again by itself when the server says "not now": a full cluster (`503 no_room`) or a
// backend out of reach for a moment (`503 unavailable`), both sent with `Retry-After`. Bounded:
// the page gives up after RETRY_FOR_MS, and the player may stop it sooner.

export const RETRY_FOR_MS = 3 * 60_000;
const MAX_WAIT_S = 60;
const RETRY_CODES = new Set(["no_room", "unavailable"]);

export class Cancelled extends Error {
  constructor() {
    super("cancelled");
    this.code = "cancelled";
  }
}

// Only a refusal that names its wait is tried again: without `Retry-After` the server gave no
// promise that waiting helps. `noRetry` marks a failure after something was already created.
export function retryable(err) {
  return (
    err?.status === 503 &&
    RETRY_CODES.has(err.code) &&
    typeof err.retryAfter === "number" &&
    !err.noRetry
  );
}

// The server's wait, kept within 1–60 s, plus up to a fifth more at random: browsers refused in
// the same second would otherwise all come back in the same second.
export function waitMs(seconds) {
  const s = Math.min(Math.max(seconds, 1), MAX_WAIT_S);
  return Math.round(s * 1000 * (1 + Math.random() * 0.2));
}

export function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Cancelled());
    const onAbort = () => {
      clearTimeout(id);
      reject(new Cancelled());
    };
    const id = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

// `attempt()` until it succeeds, fails for another reason, or the next wait would pass the
// limit (the last refusal is thrown, marked `gaveUp`). `onWait(err, ms)` before each wait.
// Every wait is at least a second, so the loop runs at most RETRY_FOR_MS / 1000 times.
export async function withRetry(attempt, { signal, onWait, forMs = RETRY_FOR_MS }) {
  const giveUpAt = Date.now() + forMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!retryable(err)) throw err;
      const ms = waitMs(err.retryAfter);
      if (Date.now() + ms > giveUpAt) {
        err.gaveUp = true;
        throw err;
      }
      onWait?.(err, ms);
      await pause(ms, signal);
    }
  }
}
