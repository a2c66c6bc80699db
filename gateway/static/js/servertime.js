// The server's clock as seen from here. Each event's `at` minus the local time it arrived is the
// clock offset less the network delay, so the largest sample is the best estimate.
let offset = null;

export function noteServerTime(at, { reset = false } = {}) {
  if (typeof at !== "number") return;
  const sample = at - Date.now();
  if (reset || offset === null || sample > offset) offset = sample;
}

export function serverNow() {
  return Date.now() + (offset ?? 0);
}
