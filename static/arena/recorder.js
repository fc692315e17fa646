// The event recorder on a hosted benchmark's page (docs/hosted.md, "The recorder"): the proxy puts
// it first in the peer's own page, at the attempt's own host, joined with what it imports into one
// classic script (annotation/hosted/bundle.py), so it runs before the peer's scripts. The capture, the numbered batches,
// acks, resends, local copy and beacon are our page's own (events.js); the root is the whole
// document (coordinates are document pixels, no stage control is named). The page's answer goes to
// the peer through the proxy, never through here: once the proxy says the check is over
// (SUBMITTED_HEADER on its reply), the recorder sends act.submit, which closes our stream; the
// verdict is the peer's, kept on the server. A play page framing this one hears "submitted".
import { capture, Transport, now } from "./events.js";

const SUBMITTED_HEADER = "x-arena-submitted";
const data = JSON.parse(document.getElementById("arena-recorder-data").textContent);
const framed = window.parent !== window;
let parentOrigin = null; // learnt from the play page's hello (only our site may frame this page)
let outcome = null; // {verdict} once the server scored the attempt
let stopCapture = () => {};
let submitted = false;
let veil = null;

const transport = new Transport(data, {
  hold() {},
  health() {},
  submitted(verdict) {
    outcome = { verdict };
    stopCapture();
    cover(verdict);
    tell();
  },
});

/** The page's answer is with the peer: the stream ends with our submit (once). */
function submit() {
  if (submitted || transport.finished) return;
  submitted = true;
  stopCapture();
  transport.push({ k: "act.submit", t: now() });
  cover(null);
}

/** Over the peer's page once its answer is in: its own verdict line is not ours to show (where a
 *  study hides verdicts the proxy gave it none), and nothing more is to be done on it. */
function cover(verdict) {
  if (!document.body) return addEventListener("DOMContentLoaded", () => cover(verdict), { once: true });
  if (!veil) {
    veil = document.createElement("div");
    veil.setAttribute("role", "status");
    Object.assign(veil.style, {
      position: "fixed",
      inset: "0",
      zIndex: "2147483647",
      display: "flex",
      alignItems: "center",
      justifyContent: "center",
      background: "rgba(255, 255, 255, 0.92)",
      font: "600 20px system-ui, sans-serif",
      color: "#222",
    });
    document.body.append(veil);
  }
  const word = verdict == null ? "" : verdict.correct ? " · Correct" : " · Not correct";
  veil.textContent = outcome ? `Submitted${word}` : "Submitting…";
}

function tell() {
  if (framed && parentOrigin && outcome) window.parent.postMessage({ type: "arena:submitted", ...outcome }, parentOrigin);
}

// The play page says hello (its origin is ours: this page's CSP lets only the site's hosts frame
// it) and, at its time limit, time-up: what is entered is what counts, and no answer goes out.
addEventListener("message", (event) => {
  if (!framed || event.source !== window.parent) return;
  if (event.data?.type === "arena:hello") {
    parentOrigin = event.origin;
    tell();
  } else if (event.data?.type === "arena:time-up") {
    submit();
  }
});

// The proxy marks the reply that ends the check; the page may ask by fetch or XMLHttpRequest.
const pageFetch = window.fetch;
window.fetch = async function (...args) {
  const response = await pageFetch.apply(this, args);
  if (response.headers.get(SUBMITTED_HEADER)) submit();
  return response;
};
const pageSend = XMLHttpRequest.prototype.send;
XMLHttpRequest.prototype.send = function (...args) {
  this.addEventListener("load", () => this.getResponseHeader(SUBMITTED_HEADER) && submit());
  return pageSend.apply(this, args);
};

// For tests and tools: where the stream stands (the peer's page could read it; it holds no truth).
window.arenaRecorder = {
  state: () => ({
    attempt: data.attempt,
    nextSeq: transport.nextSeq,
    acked: transport.acked,
    pending: transport.unacked.length + transport.queue.length,
    submitted: outcome !== null,
    transport: transport.mode, // "ws", or "http" on the fallback
  }),
};

if (data.submitted) {
  outcome = { verdict: null };
  cover(null);
} else {
  const root = document.documentElement;
  stopCapture = capture(root, (event) => transport.push(event), () => 1, data, { controls: false });
  const state = document.visibilityState === "hidden" ? "hidden" : "visible";
  transport.push({ k: "load", t: now(), w: innerWidth, h: innerHeight, scale: 1, state });
  transport.start();
  if (data.checked) submit(); // the peer answered before this load: the submit is due now
}
if (framed) window.parent.postMessage({ type: "arena:ready" }, "*"); // nothing in it: asks for hello
