// The stage: the published CaptchaArena page at 1280x1080, built from the layout in the page data
// (puzzles/layout.py), scaled as a whole to fit the window. Every element sits at its layout box
// and carries a data-role (instruction, image, reference, cell, prev, next, slider, piece, hold,
// text, submit, stats, steps), so a replay or an agent that clicks stage coordinates (at a
// 1280x1080 viewport, scale 1) hits what a person would, and tools can find each element.

export const round2 = (v) => Math.round(v * 100) / 100;

export function make(tag, className, parent) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (parent) parent.appendChild(el);
  return el;
}

/** Place an element absolutely at a stage (or parent-relative) rectangle. */
export function place(el, r) {
  Object.assign(el.style, { left: `${r.x}px`, top: `${r.y}px`, width: `${r.w}px`, height: `${r.h}px` });
  return el;
}

/** The element box of an image box: its content plus its border. */
const outer = (box) => ({ x: box.x - box.border, y: box.y - box.border, w: box.w + 2 * box.border, h: box.h + 2 * box.border });

function role(el, name, index) {
  el.dataset.role = name;
  if (index !== undefined) el.dataset.index = index;
  return el;
}

function picture(src, className, parent) {
  const img = make("img", className, parent);
  img.src = src;
  img.alt = "";
  img.draggable = false;
  return img;
}

function button(className, text, rect, parent) {
  const el = place(make("button", className, parent), rect);
  el.type = "button";
  el.textContent = text;
  return el;
}

/** The frame every type shares: title, stats bar, Action Steps stars, the white card. */
function frame(stage, layout, stats) {
  place(make("h1", "title", stage), layout.title).textContent = "CaptchaArena";
  const bar = role(place(make("div", "stats", stage), layout.stats), "stats");
  const counters = {};
  for (const [name, label] of [["total", "Total"], ["correct", "Correct"], ["accuracy", "Accuracy"]]) {
    const item = make("span", `stat ${name}`, bar);
    item.append(`${label}: `);
    counters[name] = make("span", "value", item);
  }
  const steps = role(place(make("div", "steps", stage), layout.steps_box), "steps");
  make("span", "steps-label", steps).textContent = "Action Steps:";
  for (let i = 0; i < 5; i++) make("span", "star", steps).textContent = i < layout.steps ? "★" : "☆";
  place(make("div", "card", stage), layout.card);
  return showStats(counters, stats);
}

/** The stats bar's counters; returns a function that counts one more answer. */
function showStats(counters, stats) {
  let { total, correct } = stats;
  const draw = () => {
    counters.total.textContent = total;
    const hidden = correct === null; // the participant is not shown verdicts
    counters.correct.parentElement.hidden = counters.accuracy.parentElement.hidden = hidden;
    if (hidden) return;
    counters.correct.textContent = correct;
    counters.accuracy.textContent = total ? `${((100 * correct) / total).toFixed(1)}%` : "0%";
  };
  draw();
  return (verdict) => {
    total += 1;
    if (verdict && correct !== null) correct += verdict.correct ? 1 : 0;
    draw();
  };
}

/** Build the stage's elements; returns the handles the widgets work with. */
export function buildStage(stage, data) {
  const { layout, images } = data;
  stage.dataset.widget = data.widget;
  stage.dataset.family = layout.family;
  stage.toggleAttribute("data-single", Boolean(data.single_choice));
  place(stage, { x: 0, y: 0, ...layout.stage });
  const count = frame(stage, layout, data.stats);

  const ui = { stage, count, controls: {}, cells: [], labels: {}, box: layout.image };
  if (layout.reference) ui.reference = role(place(picture(images.reference, "reference", stage), outer(layout.reference)), "reference");
  if (layout.family === "patch") place(make("div", "patch-frame", stage), outer(layout.image));
  if (layout.image && !["tiles", "bingo"].includes(layout.family)) {
    const box = layout.family === "patch" ? layout.image : outer(layout.image);
    ui.image = role(place(picture(images.image, "main", stage), box), "image");
  }
  // Markers and the slider's piece live in an overlay exactly over the main image's content.
  if (layout.image) ui.overlay = place(make("div", "overlay", stage), layout.image);
  layout.cells.forEach((rect, i) => ui.cells.push(role(place(make("div", "cell", stage), rect), "cell", i)));
  for (const label of layout.labels) {
    ui.labels[label.name] = place(make("div", `label ${label.name}`, stage), label);
    ui.labels[label.name].textContent = label.text;
  }
  if (layout.dots) ui.dots = place(make("div", "dots", stage), layout.dots);

  const controls = layout.controls;
  if (controls.prev) ui.controls.prev = role(button("arrow prev", "◀", controls.prev, stage), "prev");
  if (controls.next) ui.controls.next = role(button("arrow next", "▶", controls.next, stage), "next");
  if (controls.reset) ui.controls.reset = role(button("reset", "Reset Clicks", controls.reset, stage), "reset");
  if (controls.hold) ui.controls.hold = role(button("hold", "HOLD", controls.hold, stage), "hold");
  if (controls.text) {
    const input = role(place(make("input", "text", stage), controls.text), "text");
    Object.assign(input, { type: "text", inputMode: "numeric", placeholder: "Enter the sum", maxLength: data.text_max, autocomplete: "off" });
    ui.controls.text = input;
  }
  if (controls.track) ui.track = place(make("div", "track", stage), controls.track);
  if (controls.submit) ui.controls.submit = role(button("submit", layout.submit_label, controls.submit, stage), "submit");
  ui.instruction = role(place(make("h3", `instruction ${layout.instruction_style}`, stage), layout.instruction), "instruction");
  ui.instruction.textContent = data.instruction;
  ui.result = place(make("div", "result", stage), layout.result);
  return ui;
}

// Below this scale the published page's text (16-18 px) is too small to read comfortably.
export const READABLE_SCALE = 0.6;
const MARGIN = 16; // stage px kept around the puzzle when a person's window shows it alone

/** The part of the stage a person needs on a small window: every box of the puzzle (images,
 *  cells, controls, labels) and the instruction's text, with a margin. */
export function puzzleRegion(layout, instruction) {
  const saved = instruction.style.width;
  instruction.style.width = "max-content"; // the text's own width, centred where the page centres it
  const text = Math.min(instruction.offsetWidth, layout.instruction.w);
  instruction.style.width = saved;
  const centre = layout.instruction.x + layout.instruction.w / 2;
  const boxes = [
    ...[layout.image, layout.reference].filter(Boolean).map(outer),
    ...layout.cells,
    ...Object.values(layout.controls),
    ...layout.labels,
    { x: centre - text / 2, y: layout.instruction.y, w: text, h: layout.instruction.h },
  ];
  const x = Math.min(...boxes.map((b) => b.x)) - MARGIN, y = Math.min(...boxes.map((b) => b.y)) - MARGIN;
  const right = Math.max(...boxes.map((b) => b.x + b.w)) + MARGIN, bottom = Math.max(...boxes.map((b) => b.y + b.h)) + MARGIN;
  return { x, y, w: right - x, h: Math.min(layout.stage.h, bottom) - y };
}

/** The scale and offset that show `region` (stage px) in a window area, centred. */
function fitting(region, area) {
  const s = Math.min(area.w / region.w, area.h / region.h);
  return { s, left: area.x + (area.w - region.w * s) / 2 - region.x * s, top: area.y + (area.h - region.h * s) / 2 - region.y * s };
}

/** Scale the stage to the window under `top` px, centred; returns the scale. The whole stage
 *  when it is readable so (always for an agent); on a small window, a person's view closes in on
 *  `region`, the puzzle itself (the title, stats and stars are left out of view). */
export function fitStage(stage, top = 0, region = null) {
  // offsetWidth and offsetHeight are the stage's own size, before the scale transform.
  const whole = { x: 0, y: 0, w: stage.offsetWidth, h: stage.offsetHeight };
  const area = { x: 0, y: top, w: document.documentElement.clientWidth || innerWidth, h: (document.documentElement.clientHeight || innerHeight) - top };
  let fit = fitting(whole, area);
  if (region && fit.s < READABLE_SCALE) {
    const closer = fitting(region, area);
    if (closer.s > fit.s) fit = closer;
  }
  Object.assign(stage.style, { transform: `scale(${fit.s})`, left: `${fit.left}px`, top: `${fit.top}px` });
  return fit.s;
}

/** Client (viewport) coordinates to stage pixels. */
export function toStage(stage, clientX, clientY) {
  const r = stage.getBoundingClientRect();
  const s = r.width / stage.offsetWidth;
  return { x: (clientX - r.left) / s, y: (clientY - r.top) / s };
}

/** Stage pixels to natural image pixels of the image box {x, y, w, h, natural_w, natural_h}. */
export function toNatural(box, p) {
  return { x: ((p.x - box.x) * box.natural_w) / box.w, y: ((p.y - box.y) * box.natural_h) / box.h };
}
