// The table's WebSocket: hello → welcome, one answer (ack/error) per frame matched by `id`,
// events checked for `seq` gaps (a gap means we missed something: start over with a fresh
// snapshot), and reconnection with capped, jittered backoff. The snapshot is the whole truth
// (R25), so every reconnection is just a new hello.

import { noteServerTime, serverNow } from "./servertime.js";

const CLOSE = {
  badToken: 4401,
  noSeat: 4403,
  unknownTable: 4404,
  replaced: 4409,
  seatChanged: 4410,
  seatGiven: 4411,
  watchingOff: 4412,
};
// A link that has said nothing for QUIET_MS is probed with a ping; one unanswered for
// PROBE_MS more is dead (a cut network holds frames without closing anything): "Reconnecting…"
// within ~5 s, and a new socket.
const QUIET_MS = 2_000;
const PROBE_MS = 3_000;
const CHECK_EVERY_MS = 500;
// A socket that has not been welcomed this long after it was opened is given up and another
// tried: a network can accept a connection and then carry nothing (a cut behind a proxy), and
// without a deadline the player would wait on "Reconnecting…" for good. Long enough for a busy
// table to answer a hello.
const WELCOME_MS = 10_000;
// Commands expire this long after they are sent (in the server's time); the server refuses one
// judged later. So once a command's expiry and a margin for clock estimates have passed without
// an answer, it is certain it was not applied, and the player can be told so.
const COMMAND_TTL_MS = 3_000;
const EXPIRY_MARGIN_MS = 1_000;

export class Connection {
  // handlers: onWelcome(frame), onEvent(frame), onStatus(status, detail), onFatal(code)
  constructor({ token, table, handlers, watch = false, claimant = false }) {
    this.token = token;
    this.table = table;
    this.watch = watch; // a watcher's hello: no seat, the public view
    // A watcher who may ask for a bot's seat: the table must know this socket to hand it over.
    this.claimant = claimant;
    this.h = handlers;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.lastSeq = 0;
    this.attempt = 0;
    this.stopped = false;
    this.timer = null;
    this.welcomeBy = null;
    this.pinger = null;
    this.heard = 0;
    this.probeSent = 0;
  }

  start() {
    this.stopped = false;
    this.open();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.welcomeBy);
    clearInterval(this.pinger);
    if (this.ws) this.ws.close(1000);
    this.ws = null;
    this.failAll("closed");
  }

  open() {
    clearTimeout(this.timer);
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${proto}//${location.host}/ws`);
    this.ws = ws;
    this.h.onStatus(this.attempt === 0 ? "connecting" : "reconnecting");
    clearTimeout(this.welcomeBy);
    this.welcomeBy = setTimeout(() => {
      if (ws !== this.ws || this.stopped) return;
      this.ws = null;
      ws.close(1000);
      this.failAll("stalled");
      this.scheduleReconnect();
    }, WELCOME_MS);
    ws.onopen = () => {
      this.lastSeq = 0;
      const hello = { type: "hello", id: "hello", token: this.token, table: this.table };
      if (this.watch) hello.watch = true;
      if (this.watch && this.claimant) hello.claimant = true;
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (msg) => {
      if (ws !== this.ws) return;
      this.heard = Date.now();
      this.probeSent = 0;
      let frame;
      try {
        frame = JSON.parse(msg.data);
      } catch {
        return;
      }
      this.receive(frame);
    };
    ws.onclose = (ev) => {
      if (ws !== this.ws) return; // an old socket we replaced on purpose
      clearInterval(this.pinger);
      this.failAll("closed");
      this.ws = null;
      if (this.stopped) return;
      if (ev.code === CLOSE.badToken) return this.fatal("bad_token");
      if (ev.code === CLOSE.noSeat) return this.fatal("no_seat");
      if (ev.code === CLOSE.unknownTable) return this.fatal("unknown_table");
      // The host closed the table to watchers: coming back would only be refused.
      if (ev.code === CLOSE.watchingOff) return this.fatal("watching_off");
      // Another tab of this player took the seat over: fighting it would loop forever.
      if (ev.code === CLOSE.replaced) return this.fatal("replaced");
      // Our seat changed hands (we moved, or the host freed it): a new hello says where we
      // sit now, or that we hold no seat here.
      if (ev.code === CLOSE.seatChanged) return this.open();
      // Joining late: the bot's seat we asked for is ours; say hello again, seated this time.
      if (ev.code === CLOSE.seatGiven) {
        this.watch = false;
        this.h.onSeatGiven?.();
        return this.open();
      }
      this.scheduleReconnect();
    };
  }

  fatal(code) {
    this.stopped = true;
    this.h.onFatal(code);
  }

  scheduleReconnect() {
    this.attempt += 1;
    const base = Math.min(10_000, 500 * 2 ** Math.min(this.attempt - 1, 5));
    const delay = base / 2 + Math.random() * (base / 2);
    this.h.onStatus("reconnecting", { inMs: delay });
    this.timer = setTimeout(() => this.open(), delay);
  }

  // Nothing heard for a while: ask; no answer to the question either: the link is dead.
  checkLink() {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    const now = Date.now();
    if (this.probeSent && now - this.probeSent > PROBE_MS) {
      clearInterval(this.pinger);
      this.h.onStatus("reconnecting");
      this.ws = null;
      ws.close(1000);
      this.failAll("stalled");
      this.scheduleReconnect();
      return;
    }
    if (!this.probeSent && now - this.heard > QUIET_MS) {
      this.probeSent = now;
      ws.send(JSON.stringify({ type: "ping", id: `p${this.nextId++}` }));
    }
  }

  // Drop this socket and say hello again: used when events were missed.
  resync() {
    const old = this.ws;
    this.ws = null;
    if (old) old.close(1000);
    this.failAll("closed");
    this.open();
  }

  retryNow() {
    this.stopped = false;
    this.attempt = Math.max(1, this.attempt);
    this.open();
  }

  receive(frame) {
    const type = frame.type;
    noteServerTime(frame.at, { reset: type === "welcome" });
    if (type === "welcome") {
      clearTimeout(this.welcomeBy);
      this.attempt = 0;
      this.lastSeq = typeof frame.seq === "number" ? frame.seq : 0;
      clearInterval(this.pinger);
      this.heard = Date.now();
      this.probeSent = 0;
      this.pinger = setInterval(() => this.checkLink(), CHECK_EVERY_MS);
      this.h.onStatus("online");
      this.h.onWelcome(frame);
      return;
    }
    if (type === "error" && (frame.id === "hello" || frame.id === undefined) && !this.lastSeq) {
      // The hello was refused; the close code that follows says what to do.
      if (["bad_token", "unknown_table", "no_seat", "table_lost", "watching_off"].includes(frame.code)) {
        this.fatal(frame.code === "table_lost" ? "unknown_table" : frame.code);
        this.ws?.close(1000);
      }
      return;
    }
    if (type === "ack" || type === "error" || type === "pong") {
      const waiter = this.pending.get(frame.id);
      if (waiter) {
        this.pending.delete(frame.id);
        waiter.resolve(frame);
      }
      return;
    }
    if (typeof frame.seq === "number") {
      if (this.lastSeq && frame.seq !== this.lastSeq + 1) {
        this.resync();
        return;
      }
      this.lastSeq = frame.seq;
    }
    this.h.onEvent(frame);
  }

  // Send a frame; resolves with its answer (ack, pong or error frame). Rejects with "offline"
  // when it never left, and with "unconfirmed" when it left but no answer came before its
  // expiry passed: then it was either applied in time (the next snapshot shows it) or never
  // will be (the server refuses it as `expired`), never applied later.
  send(frame) {
    return new Promise((resolve, reject) => {
      const ws = this.ws;
      if (!ws || ws.readyState !== WebSocket.OPEN) {
        reject(new Error("offline"));
        return;
      }
      const id = `c${this.nextId++}`;
      const command = frame.type !== "ping";
      const expires = Math.round(serverNow()) + COMMAND_TTL_MS;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error("unconfirmed"));
      }, COMMAND_TTL_MS + EXPIRY_MARGIN_MS);
      const settle = (answer) => {
        clearTimeout(timer);
        resolve(answer);
      };
      // A socket that died fails its commands at once, but the player is told only once their
      // expiry has passed: until then the server could still apply them.
      const fail = (err) => {
        if (!command) {
          clearTimeout(timer);
          reject(err);
        }
      };
      this.pending.set(id, { resolve: settle, reject: fail, timer });
      ws.send(JSON.stringify(command ? { ...frame, id, expires } : { ...frame, id }));
    });
  }

  failAll(reason) {
    for (const w of this.pending.values()) w.reject(new Error(reason));
    this.pending.clear();
  }
}
