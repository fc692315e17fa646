// The live admin dashboard: renders summaries from /ws/dashboard/ as they come, reconnects with
// backoff, and polls the JSON endpoint while the socket is down so the page never goes stale.
// While the database is down the socket says so (an "unavailable" error frame) and the JSON
// endpoint answers 503: the page says the database is unavailable, keeps the last figures it had,
// and goes live again with the next summary.
const root = document.getElementById("dashboard");
const stateBox = document.getElementById("dash-state");
const POLL_MS = 5000;
const BACKOFF_MS = [1000, 2000, 4000, 8000, 15000, 30000];
const REFUSED = 4403; // the server's "not staff": retrying would not help
const UNAVAILABLE = "unavailable"; // the error code of the database being down (arena_site/errors.py)
const formats = root.dataset.reportFormats.split(",");
// URL patterns from the server ("/studies/{study_id}/report.{fmt}"), filled in here.
const fillUrl = (template, values) => template.replace(/\{(\w+)\}/g, (_, key) => encodeURIComponent(values[key]));
let latestSubmitMs = null;

// --- rendering ---------------------------------------------------------------------------
/** A DOM element with text children only (names come from users: never set as HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children.filter((c) => c != null));
  return node;
}

const byId = (id) => document.getElementById(id);
const setText = (id, text) => (byId(id).textContent = text);
const percent = (fraction) => `${(fraction * 100).toFixed(1)}%`;
const rate = (perMin) => (perMin >= 10 ? perMin.toFixed(0) : perMin.toFixed(1));

function bar(fraction, label) {
  const fill = el("span", { class: "dash-bar-fill" });
  fill.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
  return el("span", { class: "dash-bar", role: "progressbar", "aria-label": label,
    "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": (fraction * 100).toFixed(0) }, fill);
}

function emptyRow(columns, text) {
  return el("tr", {}, el("td", { class: "dash-empty", colspan: String(columns) }, text));
}

function studyRow(study) {
  const links = formats.map((fmt) => el("a", { href: fillUrl(root.dataset.reportUrl, { study_id: study.id, fmt }) }, fmt));
  return el("tr", {},
    el("td", {}, study.name),
    el("td", { class: "num" }, String(study.enrolled)),
    el("td", { class: "num" }, String(study.finished)),
    el("td", { class: "num" }, `${study.slots_done} / ${study.slots_total}`),
    el("td", { class: "dash-progress-col" }, bar(study.progress, `${study.name} progress`),
      el("span", { class: "dash-bar-label" }, percent(study.progress))),
    el("td", { class: "dash-links" }, ...links));
}

function typeRow(row) {
  return el("tr", {},
    el("td", {}, el("code", {}, row.type)),
    el("td", { class: "num" }, String(row.attempts)),
    el("td", { class: "num" }, String(row.correct)),
    el("td", { class: "num" }, percent(row.pass1)),
    el("td", { class: "dash-progress-col" }, bar(row.pass1, `${row.type} Pass@1`)));
}

function flagItem(flag) {
  const when = new Date(flag.created_at).toLocaleTimeString();
  return el("li", {},
    el("span", { class: `dash-reason dash-reason-${flag.reason}` }, flag.reason), " ",
    el("a", { href: fillUrl(root.dataset.reviewUrl, { uid: flag.puzzle_uid }) }, flag.puzzle_type),
    el("time", { datetime: flag.created_at }, when));
}

function render(summary) {
  setText("dash-active", String(summary.active_annotators));
  const t = summary.throughput;
  setText("dash-rate-1m", rate(t.per_min_1m));
  setText("dash-count-1m", String(t.last_1m));
  setText("dash-rate-10m", rate(t.per_min_10m));
  const flags = summary.new_flags;
  setText("dash-flags-open", String(flags.open));
  setText("dash-flags-recent", String(flags.recent));
  setText("dash-flags-window", `${Math.round(flags.since_s / 60)} min`);
  byId("dash-flag-list").replaceChildren(...flags.latest.map(flagItem));
  const studies = summary.studies.map(studyRow);
  byId("dash-studies").replaceChildren(...(studies.length ? studies : [emptyRow(6, "No open study.")]));
  const types = summary.pass1_by_type.map(typeRow);
  byId("dash-types").replaceChildren(...(types.length ? types : [emptyRow(5, "No scored answer yet.")]));
  latestSubmitMs = summary.latest_submit_ms;
  showLastSubmit();
  setText("dash-updated", new Date().toLocaleTimeString());
}

/** "12 s ago", kept ticking between summaries. */
function showLastSubmit() {
  if (latestSubmitMs == null) return setText("dash-last-submit", "none yet");
  const s = Math.max(0, Math.round((Date.now() - latestSubmitMs) / 1000));
  const ago = s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 3600)} h`;
  setText("dash-last-submit", `${ago} ago`);
}

function setState(state, label) {
  stateBox.dataset.state = state;
  stateBox.querySelector(".dash-state-label").textContent = label;
}

// --- transport: the socket, and polling while it is down ------------------------------------
let failures = 0;
let pollTimer = null;
let polled = false; // a poll has answered since the socket went down

/** The database is down: the figures shown are the last ones read, until a summary comes. */
function showUnavailable() {
  setState("unavailable", "database unavailable · retrying");
}

function showDown() {
  setState(polled ? "polling" : "reconnecting",
    polled ? `reconnecting · polling every ${POLL_MS / 1000} s` : "reconnecting");
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const socket = new WebSocket(scheme + location.host + root.dataset.socket);
  socket.addEventListener("open", () => {
    failures = 0;
    polled = false;
    stopPolling();
    setState("live", "live");
  });
  socket.addEventListener("message", (message) => {
    const frame = JSON.parse(message.data);
    if (frame.type === "summary") {
      render(frame);
      setState("live", "live");
    } else if (frame.type === "error" && frame.code === UNAVAILABLE) {
      showUnavailable();
    }
  });
  socket.addEventListener("close", (event) => {
    if (event.code === REFUSED) return setState("refused", "not allowed: sign in as staff");
    const wait = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)];
    failures += 1;
    showDown();
    startPolling();
    setTimeout(connect, wait);
  });
}

function startPolling() {
  if (pollTimer === null) pollTimer = setInterval(poll, POLL_MS);
}

function stopPolling() {
  clearInterval(pollTimer);
  pollTimer = null;
}

async function poll() {
  try {
    const response = await fetch(root.dataset.json, { headers: { Accept: "application/json" } });
    if (response.status === 403) {
      stopPolling();
      return setState("refused", "not allowed: sign in as staff");
    }
    if (response.status === 503) return showUnavailable();
    if (!response.ok) return;
    render(await response.json());
    // An answer that lands after the socket came back must not mark the page as not live.
    if (pollTimer !== null) {
      polled = true;
      showDown();
    }
  } catch {
    // the server is down too: the socket's backoff will find it again
  }
}

render(JSON.parse(byId("dash-initial").textContent));
setInterval(showLastSubmit, 1000);
connect();
