// Event capture and delivery, per docs/events.md: raw events are queued, cut into numbered
// batches, sent over a WebSocket (or the HTTP fallback) and kept until acknowledged.
import { toStage, round2 } from "./stage.js";

const FLUSH_MS = 100;
const MIN_DELAY = 500;
const MAX_DELAY = 8000;
const CONNECT_TIMEOUT_MS = 4000;
// An open socket that acknowledges nothing for this long is dead (a black hole, a stalled proxy):
// the page beats every second, so a live server always has something to acknowledge.
const ACK_TIMEOUT_MS = 4000;
// Batches in flight on a socket (sent, not yet answered): after a long outage a page holds
// hundreds; sent all at once they overran the server's inbox before any ack came back.
const WINDOW = 32;
// The server answers every batch once: with an ack (the contiguous one, which stays at a gap's
// edge while a batch before it is missing), or with one of these errors alone. Other errors (a
// refused batch's number, the attempt's limit) come beside the batch's ack.
const ANSWERED_ALONE = new Set(["closed", "seq_conflict"]);
const POST_TIMEOUT_MS = 5000; // one fallback request; a hung one must not stop the fallback
// Fallback retries: 1 s, then 2 s. A longer back-off overshot the server's return by up to its
// length (9 s after a 20 s database outage); a failing request costs the server little.
const POST_MIN_DELAY = 1000;
const POST_MAX_DELAY = 2000;
// A fallback request carries up to the page data's `post_max` batches and about this much text
// (the site's body limit is 1 MiB): a backlog drains a request per post_max batches, not per one.
const POST_CHARS = 512 * 1024;
const BEACON_CHUNK = 100; // events per batch cut at pagehide: beacons have a small byte quota
// The unacknowledged batches are kept in localStorage, per attempt, so a new tab, a restarted
// browser or a later visit of the attempt resends them (sessionStorage died with its tab).
const MAX_SAVED_CHARS = 1_000_000; // localStorage holds about 5 MB an origin; the oldest batches first
const SAVED_DAYS = 30; // a copy no visit came back for is dropped after this long
const POINTERS = new Set(["mouse", "pen", "touch"]);
// The controls a focusin names (annotation/live/frames.py): the server checks that a key which
// makes an action was pressed on the control the action names (annotation/live/evidence.py).
const CONTROLS = new Set(["submit", "next", "prev", "reset", "hold", "text", "slider"]);

const round3 = (v) => Math.round(v * 1000) / 1000;
/** Epoch ms now, and of a DOM event (its own timeStamp, not the time we handle it). */
export const now = () => round3(performance.timeOrigin + performance.now());
export const stamp = (e) => round3(performance.timeOrigin + e.timeStamp);

/** The name of a focused element for a focusin: a stage control, the picture's keyboard
 *  crosshair ("image"), a grid cell ("cell:3"), or "other". */
function controlName(stage, el) {
  if (!(el instanceof Element) || !stage.contains(el)) return "other";
  if (el.classList.contains("overlay")) return "image";
  const role = el.dataset.role;
  if (role === "cell") return `cell:${el.dataset.index}`;
  return CONTROLS.has(role) ? role : "other";
}

/** A focusin for the element that has the focus now, if any: a widget may focus one before
 *  capture starts (the text box is focused on load), and that focusin went unheard. */
export function focusedNow(stage) {
  const el = document.activeElement;
  return el && el !== document.body ? { k: "focusin", t: now(), target: controlName(stage, el) } : null;
}

/** Listen for raw events and push them; `fit` re-scales the stage and returns the scale. While the
 *  page is visible a `beat` goes out every `beat_ms` of the page data, so the server can tell
 *  silence from looking; key names are cut to its `key_max`, as the server accepts them.
 *  `controls: false` when the stage is no stage of ours (a hosted benchmark's page, whose root is
 *  the whole document: recorder.js): its elements' roles are the peer's, so a focusin names none. */
export function capture(stage, push, fit, { beat_ms: beatMs, key_max: keyMax }, { controls = true } = {}) {
  const cut = (text) => String(text ?? "").slice(0, keyMax);
  const at = (e) => {
    const p = toStage(stage, e.clientX, e.clientY);
    return { x: round2(p.x), y: round2(p.y) };
  };
  const pointer = (e) => (POINTERS.has(e.pointerType) ? e.pointerType : "mouse");
  const button = (e) => Math.min(4, Math.max(0, e.button | 0));
  const key = (e) => ({ k: e.type, t: stamp(e), key: cut(e.key), code: cut(e.code) });
  const press = (e) => ({ k: e.type, t: stamp(e), ...at(e), button: button(e), pointer: pointer(e) });
  const samples = (e) => {
    const list = e.getCoalescedEvents ? e.getCoalescedEvents() : [];
    return list.length ? list : [e];
  };
  const handlers = {
    pointerdown: press,
    pointerup: press,
    pointercancel: press,
    pointermove: (e) => samples(e).map((c) => ({ k: "pointermove", t: stamp(c), ...at(c), pointer: pointer(e) })),
    click: (e) => ({ k: "click", t: stamp(e), ...at(e), button: button(e) }),
    keydown: key,
    keyup: key,
    // Typing without keys (paste from a menu, dictation) still leaves an input event.
    input: (e) => ({ k: "input", t: stamp(e), input_type: cut(e.inputType) }),
    wheel: (e) => ({ k: "wheel", t: stamp(e), ...at(e), dx: round2(e.deltaX), dy: round2(e.deltaY) }),
    resize: (e) => ({ k: "resize", t: stamp(e), w: innerWidth, h: innerHeight, scale: fit() }),
    // An element took the focus (a Tab, a press): which control a key that follows acts on.
    focusin: (e) => ({ k: "focusin", t: stamp(e), target: controls ? controlName(stage, e.target) : "other" }),
  };
  const stop = new AbortController();
  const record = (make) => (e) => [].concat(make(e)).forEach(push);
  for (const [type, make] of Object.entries(handlers)) {
    addEventListener(type, record(make), { capture: true, passive: true, signal: stop.signal });
  }
  document.addEventListener(
    "visibilitychange",
    (e) => push({ k: "visibilitychange", t: stamp(e), state: document.visibilityState === "hidden" ? "hidden" : "visible" }),
    { capture: true, signal: stop.signal },
  );
  // Not capture phase: element focus/blur would reach a capturing window listener too.
  for (const type of ["focus", "blur"]) {
    addEventListener(type, (e) => e.target === window && push({ k: type, t: stamp(e) }), { signal: stop.signal });
  }
  const beat = setInterval(() => document.visibilityState === "visible" && push({ k: "beat", t: now() }), beatMs);
  stop.signal.addEventListener("abort", () => clearInterval(beat));
  return () => stop.abort();
}

/** The keys of the attempts' saved copies (throws when storage is disabled). */
function savedKeys() {
  const keys = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key?.startsWith("arena:")) keys.push(key);
  }
  return keys;
}

/** Drop other attempts' copies older than SAVED_DAYS: a copy lives until its batches are
 *  acknowledged, and an attempt never opened again would hold its share of the quota for good. */
function dropStale(keep) {
  const oldest = Date.now() - SAVED_DAYS * 86_400_000;
  for (const key of savedKeys()) {
    if (key === keep) continue;
    try {
      if (!(JSON.parse(localStorage.getItem(key))?.at > oldest)) localStorage.removeItem(key);
    } catch {
      localStorage.removeItem(key);
    }
  }
}

/** Drop every attempt's copy: on sign-out and on a study's end page, so the typed answers and
 *  input it holds do not outlive the person on a shared browser (static/arena/forget.js). */
export function forgetAll() {
  try {
    savedKeys().forEach((key) => localStorage.removeItem(key));
  } catch {
    // storage disabled: nothing was kept
  }
}

/** Batching, seq numbering, acks, resends, reconnects and the HTTP fallback. */
export class Transport {
  constructor(data, on) {
    this.data = data;
    this.on = on; // {hold(progress), submitted(verdict), health(ok)}
    this.queue = [];
    this.unacked = [];
    // This load's own range of batch numbers (docs/events.md, "Pages"): batches an earlier load
    // left keep theirs, each acknowledged within its own range.
    this.block = data.seq_block;
    this.nextSeq = data.next_seq;
    this.page = this.pageOf(data.next_seq);
    this.acked = data.acked ?? data.next_seq - 1; // this page's own
    this.acks = new Map([[this.page, this.acked]]);
    this.socket = null;
    this.mode = "ws";
    this.failures = 0; // sockets in a row that never answered
    this.sent = 0; // the highest seq sent on the current socket
    this.inFlight = 0; // batches sent on the current socket and not yet answered
    this.delay = MIN_DELAY;
    this.posted = 0; // HTTP: highest seq posted since the last failure
    this.retryAt = 0;
    this.postDelay = POST_MIN_DELAY;
    this.waitingSince = null; // when the socket started waiting for an ack it has not had
    this.finished = false;
    this.soon = false; // a flush is scheduled for this microtask checkpoint
    this.refused = false; // not this person's attempt: retrying cannot help
    this.key = `arena:${data.attempt}`;
    this.restore();
  }

  /** The page (load) a batch number or an ack belongs to. */
  pageOf(seq) {
    return Math.floor(seq / this.block);
  }

  /** After a reload, a crash, a closed browser: resend what the last loads of this attempt left
   *  unacknowledged, under their own numbers (idempotent on the server); this load numbers its
   *  own in the range the server gave it, so no two loads ever use one number. */
  restore() {
    let saved = null;
    try {
      saved = JSON.parse(localStorage.getItem(this.key));
      dropStale(this.key);
    } catch {
      return;
    }
    if (!saved) return;
    if (this.data.submitted) return this.forget();
    // In their order, before this page's own (a later load has a higher range). Some may have
    // been stored meanwhile (a beacon that got through): sent again, they are only acknowledged.
    const own = (batch) => this.pageOf(batch.seq) === this.page && batch.seq <= this.acked;
    this.unacked = Array.isArray(saved.unacked) ? saved.unacked.filter((batch) => !own(batch)) : [];
  }

  /** Kept current after every batch and ack, so a crash or a closed tab loses nothing sent; once
   *  everything is acknowledged the copy is cleared (the server's page data then numbers on). */
  save() {
    if (!this.unacked.length) return this.forget();
    let unacked = this.unacked;
    let text = JSON.stringify({ unacked, at: Date.now() });
    while (text.length > MAX_SAVED_CHARS && unacked.length > 1) {
      unacked = unacked.slice(0, Math.ceil(unacked.length / 2));
      text = JSON.stringify({ unacked, at: Date.now() });
    }
    try {
      localStorage.setItem(this.key, text);
    } catch {
      // storage full or disabled: the beacon is the remaining chance
    }
  }

  forget() {
    try {
      localStorage.removeItem(this.key);
    } catch {
      // storage disabled: nothing was kept
    }
  }

  /** Open, not merely connecting or closing. */
  get connected() {
    return this.socket?.readyState === 1; // WebSocket.OPEN, without relying on the global
  }

  start() {
    this.connect();
    this.timer = setInterval(() => this.tick(), FLUSH_MS);
    this.onPagehide = () => this.beacon();
    addEventListener("pagehide", this.onPagehide);
    // Hidden may be the last the page hears (a closed tab in a browser that fires no pagehide, a
    // phone that kills a background tab): what waits for the next tick is cut and saved now.
    this.onHidden = () => document.visibilityState === "hidden" && this.flush();
    document.addEventListener("visibilitychange", this.onHidden);
  }

  /** Resolves once everything is acknowledged after the submit (or after timeoutMs). */
  drained(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve) => {
      const check = () => {
        if ((this.finished && !this.unacked.length) || Date.now() > deadline) resolve();
        else setTimeout(check, 50);
      };
      check();
    });
  }

  /** For the next attempt on the same page: no more sending, reconnecting or beacons. */
  stop() {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.retry);
    removeEventListener("pagehide", this.onPagehide);
    document.removeEventListener("visibilitychange", this.onHidden);
    const socket = this.socket;
    this.socket = null;
    socket?.close();
  }

  push(event) {
    if (this.finished) return;
    this.queue.push(event);
    // Semantic actions go out at once; a microtask lets e.g. act.click + act.submit share a batch.
    if (event.k.startsWith("act.") && !this.soon) {
      this.soon = true;
      queueMicrotask(() => {
        this.soon = false;
        this.flush();
      });
    }
  }

  tick() {
    this.flush();
    if (this.connected && this.waitingSince !== null && Date.now() - this.waitingSince > ACK_TIMEOUT_MS) {
      this.dropDeadSocket();
    }
  }

  flush(chunk = this.data.batch_max) {
    const made = this.queue.length > 0;
    while (this.queue.length) {
      this.unacked.push({ type: "batch", seq: this.nextSeq++, events: this.queue.splice(0, chunk) });
    }
    if (made) this.save();
    this.sendWindow();
    if (this.mode === "http" && Date.now() >= this.retryAt) this.post();
  }

  /** Open but silent: treat it as gone (it counts towards the fallback) and connect afresh. */
  dropDeadSocket() {
    const socket = this.socket;
    this.socket = null;
    this.waitingSince = null;
    socket.close();
    console.warn("arena: no acknowledgement for a while; reconnecting");
    this.on.health(false);
    this.socketLost(false);
  }

  // --- WebSocket ---------------------------------------------------------------------
  connect() {
    if (this.stopped) return;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    let ws;
    try {
      ws = new WebSocket(scheme + location.host + this.data.socket);
    } catch (err) {
      // Some networks or extensions forbid sockets outright: count it as a failed try.
      this.socket = null;
      this.socketLost(false);
      return;
    }
    let opened = false;
    let heard = false;
    this.socket = ws;
    // A socket that neither opens nor fails (a proxy that swallows the upgrade) counts as failed.
    const timer = setTimeout(() => opened || ws.close(), CONNECT_TIMEOUT_MS);
    ws.onopen = () => {
      opened = true;
      clearTimeout(timer);
      // Open is not yet alive: the back-off, the fallback and the failure count wait for the
      // first frame that comes back (receive). The unacknowledged batches go a window at a time.
      Object.assign(this, { sent: 0, inFlight: 0, waitingSince: null });
      this.sendWindow();
    };
    ws.onmessage = (m) => {
      if (this.socket === ws && !heard) {
        heard = true;
        this.socketAlive();
      }
      this.receive(m.data, this.socket === ws);
    };
    ws.onclose = () => {
      clearTimeout(timer);
      if (this.socket !== ws) return;
      this.socket = null;
      this.socketLost(heard);
    };
  }

  /** The first frame back on a socket: it is alive, so the socket carries the batches again. */
  socketAlive() {
    Object.assign(this, { failures: 0, delay: MIN_DELAY, mode: "ws" });
    this.on.health(true);
  }

  /** A socket closed or dropped; `heard` when it answered at least once (a close with no frame
   *  back, as when a server refuses every try, counts towards the fallback). */
  socketLost(heard) {
    if (this.stopped) return;
    if (!heard && ++this.failures >= 3 && this.mode !== "http") {
      this.mode = "http";
      this.posted = 0;
      this.post();
    }
    // Keep trying the socket in the background, also while on the fallback.
    if (!this.refused && (!this.finished || this.unacked.length)) {
      this.retry = setTimeout(() => this.connect(), this.delay);
    }
    this.delay = Math.min(this.delay * 2, MAX_DELAY);
  }

  /** Send the unacknowledged batches not yet sent on this socket, while fewer than WINDOW are in
   *  flight; each answer opens the window again. In flight counts answers, not the ack's number:
   *  behind a batch the server never got, every later batch is acked at the gap's edge, and
   *  counting by number kept them in flight for good (the submit never left). Closed: they wait
   *  for the next open. */
  sendWindow() {
    if (!this.connected) return;
    for (const batch of this.unacked) {
      if (this.inFlight >= WINDOW) break;
      if (batch.seq <= this.sent) continue;
      this.socket.send(JSON.stringify(batch));
      this.sent = batch.seq;
      this.inFlight += 1;
      this.waitingSince ??= Date.now();
    }
  }

  /** Frames from a socket; `current` when from the socket now in use (an older one's answers
   *  say nothing of what is in flight on it). */
  receive(text, current = true) {
    let frames;
    try {
      frames = JSON.parse(text);
    } catch {
      return console.warn("arena: unreadable frame", text);
    }
    [].concat(frames).forEach((frame) => {
      const answer = frame.type === "ack" || (frame.type === "error" && (ANSWERED_ALONE.has(frame.code) || frame.seq == null));
      if (current && answer) this.inFlight = Math.max(0, this.inFlight - 1);
      this.handle(frame);
    });
  }

  handle(frame) {
    if (this.stopped) return; // a late answer for an attempt no longer shown
    if (frame.type === "ack") {
      // An ack covers its own page's range: the batches an earlier load left are acked apart.
      const page = this.pageOf(frame.seq);
      const acked = Math.max(this.acks.get(page) ?? 0, frame.seq);
      this.acks.set(page, acked);
      if (page === this.page) this.acked = acked;
      this.unacked = this.unacked.filter((batch) => batch.seq > acked || this.pageOf(batch.seq) !== page);
      this.waitingSince = this.unacked.length ? Date.now() : null; // heard from: the clock restarts
      this.save();
      this.sendWindow();
    } else if (frame.type === "hold") {
      this.on.hold(frame.progress);
    } else if (frame.type === "submitted") {
      this.finish();
      this.on.submitted(frame.verdict ?? null);
    } else if (frame.type === "error") {
      console.warn("arena: server refused a frame", frame.code, frame.message, frame.seq);
      if (frame.code === "not_allowed") this.refused = true;
      if (["bad_frame", "too_large", "seq_conflict"].includes(frame.code) && frame.seq != null) {
        // Sending it again cannot help; the server keeps its place so later batches still count.
        this.unacked = this.unacked.filter((batch) => batch.seq !== frame.seq);
        this.sendWindow();
      }
      if (frame.code === "closed") {
        // Already submitted: nothing more will be stored, so stop resending.
        this.finish();
        this.unacked = [];
        this.forget();
        this.on.submitted(null);
      }
    }
  }

  finish() {
    this.finished = true;
    this.queue = [];
  }

  // --- HTTP fallback -----------------------------------------------------------------
  async post() {
    // On the fallback until a socket answers: one that opens and stays silent must not stop it.
    if (this.stopped || this.posting || this.mode !== "http" || this.refused) return;
    this.posting = true;
    try {
      let batches;
      while (this.mode === "http" && (batches = this.toPost()).length) {
        this.posted = batches.at(-1).seq;
        (await this.postMany(batches)).forEach((frame) => this.handle(frame));
      }
      this.postDelay = POST_MIN_DELAY;
      this.on.health(true);
    } catch (err) {
      console.warn("arena: fallback post failed", err);
      this.posted = 0; // resend everything unacknowledged next time
      this.retryAt = Date.now() + this.postDelay;
      this.postDelay = Math.min(this.postDelay * 2, POST_MAX_DELAY);
      this.on.health(false);
    } finally {
      this.posting = false;
    }
  }

  /** The next batches not yet posted, in order: up to `post_max` and about POST_CHARS. */
  toPost() {
    const batches = [];
    let chars = 0;
    for (const batch of this.unacked) {
      if (batch.seq <= this.posted) continue;
      const size = JSON.stringify(batch).length;
      if (batches.length && (batches.length >= this.data.post_max || chars + size > POST_CHARS)) break;
      batches.push(batch);
      chars += size;
    }
    return batches;
  }

  /** Several batches in one request, a JSON list: the server answers each as it would alone. */
  async postMany(batches) {
    const response = await fetch(this.data.events_url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": this.data.csrf },
      credentials: "same-origin",
      body: JSON.stringify(batches),
      signal: AbortSignal.timeout(POST_TIMEOUT_MS),
    });
    const frames = await response.json().catch(() => null);
    if (!Array.isArray(frames)) throw new Error(`HTTP ${response.status}`);
    return frames;
  }

  /** On pagehide: the page may be gone before any ack, so beacon every unacked batch, in small
   *  ones. A beacon the browser refuses (its quota is full) stops the rest: they stay saved for
   *  the next load of this attempt, which resends them. The page says it is hidden first: the
   *  browser fires its own visibilitychange only after pagehide, too late for the beacon, and the
   *  server counts a pause only for a page that said it left (annotation/live/timing.py). */
  beacon() {
    if (document.visibilityState === "visible") this.push({ k: "visibilitychange", t: now(), state: "hidden" });
    this.flush(BEACON_CHUNK);
    this.save();
    // sendBeacon cannot set the CSRF header; the token goes in the query string instead.
    const url = new URL(this.data.events_url, location.href);
    url.searchParams.set("csrf", this.data.csrf);
    for (const batch of this.unacked) {
      if (!navigator.sendBeacon(url, new Blob([JSON.stringify(batch)], { type: "application/json" }))) {
        console.warn("arena: beacon refused; the rest is kept for the next load", batch.seq);
        break;
      }
    }
  }
}
