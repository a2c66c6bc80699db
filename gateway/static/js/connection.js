// The table's WebSocket: hello → welcome, one answer (ack/error) per frame matched by `id`,
// events checked for `seq` gaps (a gap means we missed something: start over with a fresh
// snapshot), and reconnection with capped, jittered backoff. The snapshot is the whole truth
// (R25), so every reconnection is just a new hello.

import { noteServerTime } from "./servertime.js";

const CLOSE = {
  badToken: 4401,
  noSeat: 4403,
  unknownTable: 4404,
  replaced: 4409,
  seatChanged: 4410,
};
const PING_EVERY_MS = 20_000;
const ANSWER_TIMEOUT_MS = 10_000;

export class Connection {
  // handlers: onWelcome(frame), onEvent(frame), onStatus(status, detail), onFatal(code)
  constructor({ token, table, handlers }) {
    this.token = token;
    this.table = table;
    this.h = handlers;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.lastSeq = 0;
    this.attempt = 0;
    this.stopped = false;
    this.timer = null;
    this.pinger = null;
  }

  start() {
    this.stopped = false;
    this.open();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
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
    ws.onopen = () => {
      this.lastSeq = 0;
      ws.send(JSON.stringify({ type: "hello", id: "hello", token: this.token, table: this.table }));
    };
    ws.onmessage = (msg) => {
      if (ws !== this.ws) return;
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
      // Another tab of this player took the seat over: fighting it would loop forever.
      if (ev.code === CLOSE.replaced) return this.fatal("replaced");
      // Our seat changed hands (we moved, or the host freed it): a new hello says where we
      // sit now, or that we hold no seat here.
      if (ev.code === CLOSE.seatChanged) return this.open();
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
      this.attempt = 0;
      this.lastSeq = typeof frame.seq === "number" ? frame.seq : 0;
      clearInterval(this.pinger);
      this.pinger = setInterval(() => this.send({ type: "ping" }).catch(() => {}), PING_EVERY_MS);
      this.h.onStatus("online");
      this.h.onWelcome(frame);
      return;
    }
    if (type === "error" && (frame.id === "hello" || frame.id === undefined) && !this.lastSeq) {
      // The hello was refused; the close code that follows says what to do.
      if (["bad_token", "unknown_table", "no_seat", "table_lost"].includes(frame.code)) {
        this.fatal(frame.code === "table_lost" ? "unknown_table" : frame.code);
        this.ws?.close(1000);
      }
      return;
    }
    if (type === "ack" || type === "error" || type === "pong") {
      const waiter = this.pending.get(frame.id);
      if (waiter) {
        this.pending.delete(frame.id);
        clearTimeout(waiter.timer);
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

  // Send a frame; resolves with its answer (ack, pong or error frame), rejects when offline.
  send(frame) {
    return new Promise((resolve, reject) => {
      const ws = this.ws;
      if (!ws || ws.readyState !== WebSocket.OPEN) {
        reject(new Error("offline"));
        return;
      }
      const id = `c${this.nextId++}`;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error("timeout"));
      }, ANSWER_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      ws.send(JSON.stringify({ ...frame, id }));
    });
  }

  failAll(reason) {
    for (const w of this.pending.values()) {
      clearTimeout(w.timer);
      w.reject(new Error(reason));
    }
    this.pending.clear();
  }
}
