// Entry point of the live puzzle page: stage, widget, event capture and transport.
// One attempt is mounted at a time; window.arena.next(uid) mounts the next attempt in place,
// so a queue of puzzles (or a replay) moves on without reloading the document.
import { buildStage, fitStage, puzzleRegion, toStage, toNatural, round2 } from "./stage.js";
import { capture, focusedNow, Transport, now, stamp } from "./events.js";
import { widgets } from "./widgets.js";

const container = document.getElementById("stage");
// A person's controls live outside the stage, so the stage is the published page and nothing else.
const chrome = document.getElementById("chrome");
const statusLine = document.getElementById("status");
const [studySlot, toolSlot] = [chrome.querySelector(".chrome-study"), chrome.querySelector(".chrome-tools")];
let current = null; // the mounted attempt: {data, transport, unmount}

/** Show an attempt. `asked`: performance.now() when its data was asked for (0: this document's
 *  navigation), from which the study's time limit is counted, as the server counts it from serving. */
function mount(data, asked = 0) {
  if (data.hosted) return mountHosted(data, asked);
  document.querySelector(".hosted-frame")?.remove();
  container.hidden = false;
  container.replaceChildren();
  studySlot.replaceChildren();
  toolSlot.replaceChildren();
  container.classList.remove("inert");
  chrome.hidden = !data.person;
  const ui = buildStage(container, data);
  const region = data.person ? puzzleRegion(data.layout, ui.instruction) : null;
  const fit = () => fitStage(ui.stage, chrome.hidden ? 0 : chrome.offsetHeight, region);
  fit();
  addEventListener("resize", fit);

  let locked = false;
  let stopCapture = () => {};
  let verdictShown = false;

  function setStatus(state, text) {
    statusLine.dataset.state = state;
    statusLine.textContent = text;
  }
  statusLine.dataset.verdict = "";
  document.title = titleOf(data);
  // A slow link shows an empty box for seconds: say so until the pictures are in.
  const pending = [...ui.stage.querySelectorAll("img")].filter((img) => !img.complete);
  setStatus(pending.length ? "loading" : "ready", pending.length ? "Loading the puzzle…" : "");
  Promise.all(pending.map((img) => img.decode().catch(() => {}))).then(() => {
    if (statusLine.dataset.state === "loading") setStatus("ready", "");
  });

  /** No more actions: controls disabled, overlay inert. */
  function lock() {
    locked = true;
    ui.stage.classList.add("inert");
    Object.values(ui.controls).forEach((el) => (el.disabled = true));
    stopCapture();
  }

  let counted = Boolean(data.submitted); // the stats bar counts this answer once
  function showSubmitted(verdict) {
    if (!locked) lock();
    bar?.finished();
    if (!counted) ui.count(verdict);
    counted = true;
    if (verdictShown) return; // a later "closed" error must not hide a verdict already shown
    verdictShown = verdict != null;
    const word = verdict == null ? "" : verdict.correct ? " · Correct" : " · Not correct";
    setStatus("submitted", `${timeUp ? "Time is up: submitted what you had" : "Submitted"}${word}`);
    statusLine.dataset.verdict = verdict == null ? "" : verdict.correct ? "correct" : "incorrect";
    if (verdict) {
      ui.result.textContent = verdict.correct ? "Correct!" : "Incorrect.";
      ui.result.dataset.verdict = verdict.correct ? "correct" : "incorrect";
    }
    if (data.study?.practice && !data.study.practice_left) practiceDone(data.study);
  }
  let timeUp = false;

  let widget = {};
  const transport = new Transport(data, {
    hold: (p) => widget.progress?.(p),
    submitted: showSubmitted,
    health: (ok) => {
      const state = statusLine.dataset.state;
      if (!ok && state !== "submitted") setStatus("error", "Reconnecting…");
      if (ok && state === "error") setStatus(locked ? "submitting" : "ready", locked ? "Submitting…" : "");
    },
  });

  const ctx = {
    data,
    ui,
    locked: () => locked,
    emit(kind, fields, event) {
      if (locked) return;
      transport.push({ k: kind, t: event ? stamp(event) : now(), ...fields });
    },
    submit(event) {
      if (locked) return; // one submit, whatever the UI does
      ctx.emit("act.submit", {}, event);
      lock();
      setStatus("submitting", "Submitting…");
    },
    say(text) {
      ui.result.textContent = text;
      ui.result.dataset.verdict = "notice";
    },
    pick(event) {
      const p = toStage(ui.stage, event.clientX, event.clientY);
      const n = toNatural(ui.box, p);
      const box = ui.box;
      const inside = (v, size) => round2(Math.min(Math.max(v, 0), size - 0.01)); // edge pixels stay in the image
      return {
        natural: { x: inside(n.x, box.natural_w), y: inside(n.y, box.natural_h) },
        local: { x: p.x - box.x, y: p.y - box.y },
      };
    },
  };

  widget = widgets[data.widget](ctx) || {};
  if (!data.submitted) flagButton(toolSlot, data);
  const timeIsUp = () => {
    timeUp = true;
    ctx.submit();
  };
  const bar = data.study ? studyBar(studySlot, data.study, timeIsUp, asked) : null;
  chrome.querySelector(".practice-hint")?.remove();
  if (data.study?.practice && !data.submitted) practiceHint(chrome, data);
  if (!widget.ownsSubmit) ui.controls.submit?.addEventListener("click", (e) => ctx.submit(e));
  fit(); // the chrome's height is known now

  if (data.submitted) {
    showSubmitted(null);
  } else {
    stopCapture = capture(ui.stage, (event) => transport.push(event), fit, data);
    const state = document.visibilityState === "hidden" ? "hidden" : "visible"; // opened in a background tab?
    transport.push({ k: "load", t: now(), w: innerWidth, h: innerHeight, scale: fit(), state });
    const focused = focusedNow(ui.stage); // the text box, focused on load before capture listened
    if (focused) transport.push(focused);
    transport.start();
  }
  container.dataset.attempt = data.attempt; // last: the page is built and listening
  const unmount = () => {
    bar?.stop();
    stopCapture();
    transport.stop();
    removeEventListener("resize", fit);
  };
  return { data, transport, unmount };
}

/** A hosted benchmark's attempt (docs/hosted.md): our chrome (study bar, status, Flag) above the
 *  peer's own page, framed at the attempt's own host. The recorder inside that page streams the
 *  events and says when the attempt is scored; this page sends nothing of its own. */
function mountHosted(data, asked) {
  container.replaceChildren();
  container.hidden = true;
  studySlot.replaceChildren();
  toolSlot.replaceChildren();
  chrome.hidden = !data.person;
  chrome.querySelector(".practice-hint")?.remove();
  document.querySelector(".hosted-frame")?.remove();
  const frame = Object.assign(document.createElement("iframe"), { className: "hosted-frame", src: data.hosted.frame });
  frame.title = data.title;
  document.body.append(frame);
  const place = () => {
    const top = chrome.hidden ? 0 : chrome.offsetHeight;
    Object.assign(frame.style, { top: `${top}px`, height: `${innerHeight - top}px` });
  };
  addEventListener("resize", place);
  const say = (state, text) => Object.assign(statusLine, { textContent: text }).setAttribute("data-state", state);
  say("ready", "");
  statusLine.dataset.verdict = "";
  document.title = data.study ? titleOf({ ...data, person: true }) : `${data.title} · CaptchaArena`;
  const toFrame = (message) => frame.contentWindow?.postMessage(message, data.hosted.origin);
  let done = false;
  const finished = (verdict) => {
    if (done) return;
    done = true;
    bar?.finished();
    const word = verdict == null ? "" : verdict.correct ? " · Correct" : " · Not correct";
    say("submitted", `Submitted${word}`);
    statusLine.dataset.verdict = verdict == null ? "" : verdict.correct ? "correct" : "incorrect";
    if (data.study?.practice && !data.study.practice_left) practiceDone(data.study);
  };
  // Only the attempt's own host is heard, and only from this frame.
  const onMessage = (event) => {
    if (event.origin !== data.hosted.origin || event.source !== frame.contentWindow) return;
    if (event.data?.type === "arena:ready") toFrame({ type: "arena:hello" });
    else if (event.data?.type === "arena:submitted") finished(event.data.verdict ?? null);
  };
  addEventListener("message", onMessage);
  frame.addEventListener("load", () => toFrame({ type: "arena:hello" }));
  // At the time limit what is entered counts; the page's recorder ends the stream (no answer is sent).
  const bar = data.study ? studyBar(studySlot, data.study, () => toFrame({ type: "arena:time-up" }), asked) : null;
  if (!data.submitted) flagButton(toolSlot, data);
  if (data.study?.practice && !data.submitted) {
    const hint = Object.assign(document.createElement("p"), { className: "practice-hint" });
    hint.textContent = `Practice: ${RULES.hosted}`;
    chrome.append(hint);
  }
  place();
  if (data.submitted) finished(null);
  container.dataset.attempt = data.attempt;
  const unmount = () => {
    bar?.stop();
    removeEventListener("message", onMessage);
    removeEventListener("resize", place);
  };
  return { data, transport: null, unmount };
}

const DRAIN_MS = 10000;

/** "Flag this puzzle": a reason and a note, sent to the server; the attempt goes on as it was. */
function flagButton(slot, data) {
  const button = document.createElement("button");
  button.className = "flag-button";
  button.type = "button";
  button.textContent = "⚑ Flag";
  const dialog = document.createElement("dialog");
  dialog.className = "flag-dialog";
  dialog.innerHTML = `<form method="dialog"><h3>What is wrong with this puzzle?</h3><div class="reasons"></div>
    <textarea name="note" placeholder="Anything we should know (optional)"></textarea>
    <div class="actions"><button value="cancel" formnovalidate>Cancel</button><button value="send" class="primary">Send</button></div></form>`;
  dialog.querySelector("textarea").maxLength = data.flag_note_max;
  // The reasons come from the server: set as text, never parsed as HTML.
  const reasons = dialog.querySelector(".reasons");
  for (const [value, label] of data.flag_reasons) {
    const option = document.createElement("label");
    const radio = Object.assign(document.createElement("input"), { type: "radio", name: "reason", value, required: true });
    option.append(radio, ` ${label}`);
    reasons.append(option);
  }
  button.addEventListener("click", () => dialog.showModal());
  dialog.addEventListener("close", async () => {
    if (dialog.returnValue !== "send") return;
    const form = new FormData(dialog.querySelector("form"));
    const response = await fetch(data.flag_url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": data.csrf },
      body: JSON.stringify({ reason: form.get("reason"), note: form.get("note") || "" }),
    }).catch(() => null);
    button.textContent = response?.ok ? "⚑ Flagged, thank you" : "⚑ Flag (not sent, try again)";
  });
  slot.append(button, dialog);
}

/** A study's bar: where the annotator stands, a pause link, the time left, and Continue once
 *  the server has the answer. Time up submits whatever is entered (the server checks the time). */
function studyBar(slot, study, submit, asked) {
  const bar = document.createElement("div");
  bar.className = "studybar";
  const where = study.practice ? "Practice (not scored)" : `Puzzle ${study.done + 1} of ${study.total}`;
  bar.innerHTML = `<span class="where"></span><span class="meter"><span></span></span>
    <span class="clock"></span><a class="pause" href="">Pause</a><a class="continue" href="" hidden>Continue →</a>`;
  bar.querySelector(".where").textContent = where;
  bar.querySelector(".meter span").style.width = `${(100 * study.done) / Math.max(1, study.total)}%`;
  bar.querySelector(".pause").href = study.pause_url;
  const next = bar.querySelector(".continue");
  next.href = study.next_url;
  slot.appendChild(bar);
  let timer = null;
  let hiddenSince = null;
  // The limit counts time on screen (the server leaves out the spells it saw the page hidden,
  // and a pause: elapsed_ms is on-screen time), so the clock stands still while the page is hidden.
  const onVisibility = () => {
    if (document.visibilityState === "hidden") hiddenSince ??= performance.now();
    else if (hiddenSince !== null) {
      ends += performance.now() - hiddenSince;
      hiddenSince = null;
    }
  };
  // From when the data was asked for, a moment before the server served it: the page's own
  // time-up submit then reaches the server within the limit.
  let ends = asked + (study.time_limit_s || 0) * 1000 - (study.elapsed_ms || 0);
  if (study.time_limit_s) {
    const clock = bar.querySelector(".clock");
    const tick = () => {
      if (hiddenSince !== null) return;
      const left = Math.max(0, Math.ceil((ends - performance.now()) / 1000));
      clock.textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left`;
      if (left === 0) {
        clearInterval(timer);
        submit();
      }
    };
    onVisibility();
    document.addEventListener("visibilitychange", onVisibility);
    tick();
    timer = setInterval(tick, 250);
  }
  const stop = () => {
    clearInterval(timer);
    document.removeEventListener("visibilitychange", onVisibility);
  };
  return {
    finished() {
      stop();
      bar.querySelector(".clock").textContent = study.time_limit_s ? "done" : "";
      next.hidden = false;
    },
    stop,
  };
}

/** The window's title: where the person stands (the published page's own title for agents). */
function titleOf(data) {
  const study = data.study;
  if (!data.person) return "CAPTCHA Puzzle Benchmark"; // the published page's title
  if (!study) return "Puzzle · CaptchaArena";
  const where = study.practice ? "Practice" : `Puzzle ${study.done + 1} of ${study.total}`;
  return `${where} · ${study.name}`;
}

// What each widget expects, said once in practice (the rules the published page leaves unsaid).
const RULES = {
  point: "Your first click on the picture is your answer: it is submitted at once.",
  dot: "Click the picture to place the dot (click again to move it), then press Submit.",
  points: "Click the icons in the order shown; Reset Clicks starts over; then press Submit Order.",
  cells: "Click every square that fits (click again to unselect), then press the button below.",
  single: "Click the one picture that fits, then press Submit.",
  swap: "Click two pictures, then press Swap and Submit to exchange them.",
  option: "Use the round arrows until the right picture shows, then press Submit.",
  rotate: "Use the round arrows to turn the picture, then press Submit.",
  drag: "Drag the handle under the picture until the piece fits its gap, then press Submit.",
  hold: "Press and hold the HOLD button until its bar is full; letting go submits.",
  text: "Type the number, then press Enter or Submit.",
  hosted: "this puzzle is the benchmark's own page; answer it there, once: your first answer is the one checked.",
};

function ruleOf(data) {
  if (data.widget === "point") return data.auto_submit ? RULES.point : RULES.dot;
  if (data.widget === "cells" && data.single_choice) return RULES.single;
  return RULES[data.widget];
}

/** In practice: the rule of this kind of puzzle, on its own line of the chrome. */
function practiceHint(chrome, data) {
  const hint = document.createElement("p");
  hint.className = "practice-hint";
  hint.textContent = `Practice: ${ruleOf(data)}`;
  chrome.append(hint);
}

/** After the last practice puzzle's verdict: the scored puzzles come next. */
function practiceDone(study) {
  const panel = document.createElement("dialog");
  panel.className = "practice-done";
  panel.innerHTML = `<h2>Practice is over</h2><p>From the next puzzle on, your answers count.</p>
    <p class="actions"><a class="continue" href="">Start the puzzles →</a></p>`;
  panel.querySelector("a").href = study.next_url;
  document.body.append(panel);
  panel.showModal();
}

/** Mount another attempt of this participant in place, once the current one's batches are all
 *  acknowledged (so moving on loses nothing of it). Its data is asked for only then: the server
 *  starts its clock when it serves the data. */
async function next(uid) {
  const at = (template) => template.replace("{uid}", encodeURIComponent(uid));
  await current?.transport?.drained(DRAIN_MS);
  const asked = performance.now();
  const response = await fetch(at(current.data.play_data_url), { credentials: "same-origin" });
  if (!response.ok) throw new Error(`attempt ${uid}: HTTP ${response.status}`);
  const data = await response.json();
  current?.unmount();
  current = mount(data, asked);
  history.replaceState(null, "", at(data.play_url));
}

window.arena = {
  state: () => ({
    attempt: current.data.attempt,
    acked: current.transport?.acked,
    nextSeq: current.transport?.nextSeq,
    pending: current.transport?.unacked.length,
    connected: current.transport?.connected,
    transport: current.transport?.mode,
  }),
  socket: () => current.transport?.socket,
  next,
};

current = mount(JSON.parse(document.getElementById("page-data").textContent));
// Back from the Pause page may restore this page from the back-forward cache, its countdown run
// on through the pause: load it afresh, so the server serves the puzzle again (ending the pause)
// and says the time left.
addEventListener("pageshow", (event) => event.persisted && location.reload());
