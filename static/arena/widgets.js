// One widget per page_data.widget, acting as the published page does on its elements. A widget
// turns input into visible state and semantic actions (ctx.emit); it never knows whether the
// answer is right.
//
// ctx: {data, ui, emit(kind, fields, event), submit(event), locked(), pick(event), say(text)}
// emit takes an action's one name, as logged, stored and reduced: "act.click", never "click".
// pick(event) -> {natural: {x, y} rounded natural pixels, local: {x, y} overlay pixels}.
// A widget may return {progress(p)} to receive the server's hold progress, and {ownsSubmit: true}
// when its submit button does more than submit.
import { make, place, round2 } from "./stage.js";

const mod = (a, n) => ((a % n) + n) % n;
const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

function at(el, p) {
  el.style.left = `${p.x}px`;
  el.style.top = `${p.y}px`;
  return el;
}

/** An action handler that does nothing once the attempt is submitted. */
const live = (ctx, fn) => (e) => !ctx.locked() && fn(e);

const PRESS_KEYS = ["Enter", " "];

/** A div that acts as a button: focusable, and Enter or Space does what a click does. */
function pressable(el, label, onPress) {
  Object.assign(el, { tabIndex: 0 });
  el.setAttribute("role", "button");
  el.setAttribute("aria-label", label);
  el.addEventListener("click", onPress);
  el.addEventListener("keydown", (e) => {
    if (!PRESS_KEYS.includes(e.key) || e.repeat) return;
    e.preventDefault();
    onPress(e);
  });
}

/** The image as a keyboard target: the arrow keys move a crosshair (Shift: faster), Enter or
 *  Space acts at it as a click there would. act(local, natural, event) does the work. The
 *  crosshair shows as soon as the picture has the keyboard's focus, and a key acts only where it
 *  shows: never at a place the person has not seen (the centre is a decoy on Misleading_Click). */
function pointable(ctx, act) {
  const { overlay, box } = ctx.ui;
  overlay.tabIndex = 0;
  overlay.setAttribute("role", "application");
  overlay.setAttribute("aria-label", "Picture: arrow keys move the pointer, Enter clicks");
  const cursor = make("div", "kbd-cursor", overlay);
  cursor.hidden = true;
  let at = { x: box.w / 2, y: box.h / 2 };
  const show = () => {
    Object.assign(cursor.style, { left: `${at.x}px`, top: `${at.y}px` });
    cursor.hidden = false;
  };
  const steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  overlay.addEventListener("click", live(ctx, (e) => {
    const { natural, local } = ctx.pick(e);
    act(local, natural, e);
  }));
  overlay.addEventListener("keydown", live(ctx, (e) => {
    if (e.key in steps) {
      e.preventDefault();
      const [dx, dy] = steps[e.key];
      const step = e.shiftKey ? 25 : 5;
      at = { x: clamp(at.x + dx * step, 0, box.w - 0.5), y: clamp(at.y + dy * step, 0, box.h - 0.5) };
    } else if (PRESS_KEYS.includes(e.key) && !e.repeat) {
      e.preventDefault();
      if (cursor.hidden) return show(); // focused by a click, then a key: show where it would act first
      const natural = { x: round2((at.x * box.natural_w) / box.w), y: round2((at.y * box.natural_h) / box.h) };
      act({ ...at }, natural, e);
    } else return;
    show();
  }));
  // Focus from the keyboard (Tab) shows the crosshair at once; a click's focus does not (the
  // pointer is where it acts).
  overlay.addEventListener("focus", () => overlay.matches(":focus-visible") && !ctx.locked() && show());
  overlay.addEventListener("blur", () => (cursor.hidden = true));
}

/** Click types: a pulsing dot and the click's place in the image's box, then the page submits by
 *  itself. Place_Dot: the dot moves with each click and Submit waits for the first. */
function point(ctx) {
  const { overlay, controls } = ctx.ui;
  const dot = make("div", "dot", overlay);
  const where = make("div", "click-at", overlay);
  dot.hidden = where.hidden = true;
  if (controls.submit) controls.submit.disabled = true;
  const border = ctx.ui.box.border;
  pointable(ctx, (local, natural, e) => {
    at(dot, local).hidden = false;
    if (ctx.data.auto_submit) {
      where.textContent = `(${Math.round(local.x + border)},${Math.round(local.y + border)})`;
      at(where, local).hidden = false;
    }
    ctx.emit("act.click", natural, e);
    if (controls.submit) controls.submit.disabled = false;
    if (ctx.data.auto_submit) ctx.submit(e);
  });
}

/** Click_Order: numbered circles, the click counter, "Reset Clicks"; Submit waits for a click. */
function points(ctx) {
  const { overlay, controls, labels } = ctx.ui;
  let markers = [];
  const count = () => {
    labels.clicks.textContent = `Clicks: ${markers.length}`;
    controls.submit.disabled = !markers.length;
  };
  pointable(ctx, (local, natural, e) => {
    const marker = at(make("div", "marker", overlay), local);
    marker.textContent = markers.length + 1;
    markers.push(marker);
    ctx.emit("act.click", natural, e);
    count();
  });
  controls.reset.addEventListener("click", live(ctx, (e) => {
    markers.forEach((marker) => marker.remove());
    markers = [];
    ctx.emit("act.reset", {}, e);
    count();
  }));
  count();
}

/** The tiled grids (Image_Recognition, Bingo) show one piece of the image in each cell, inside
 *  the cell's 2 px border, as the published page shows its tiles. Returns the pieces. */
function tiles(ctx) {
  const [rows, cols] = ctx.data.layout.grid;
  return ctx.ui.cells.map((cell, i) => {
    const w = cell.offsetWidth - 4, h = cell.offsetHeight - 4;
    const piece = place(make("div", "piece-of-image", cell), { x: 0, y: 0, w, h });
    piece.style.backgroundImage = `url("${ctx.data.images.image}")`;
    piece.style.backgroundSize = `${cols * w}px ${rows * h}px`;
    piece.show = (source) => {
      piece.style.backgroundPosition = `${-(source % cols) * w}px ${-Math.floor(source / cols) * h}px`;
    };
    piece.show(i);
    return piece;
  });
}

/** Select cells: each click toggles one; a single choice moves the one selection (and Submit
 *  waits for it). */
function cellSelect(ctx) {
  const { cells, controls } = ctx.ui;
  const single = ctx.data.single_choice;
  if (ctx.data.layout.family === "tiles") tiles(ctx);
  if (single) controls.submit.disabled = true;
  const mark = () => cells.forEach((cell) => cell.setAttribute("aria-pressed", cell.classList.contains("on")));
  cells.forEach((cell, i) => {
    pressable(cell, `Square ${i + 1}`, live(ctx, (e) => {
      if (single) cells.forEach((other) => other.classList.toggle("on", other === cell));
      else cell.classList.toggle("on");
      mark();
      controls.submit.disabled = false;
      ctx.emit("act.toggle", { cell: i }, e);
    }));
  });
  mark();
}

/** Bingo: pick two cells (a third pick drops the first, a picked cell clicked again is dropped);
 *  "Swap and Submit" swaps them on the page and submits. */
function swap(ctx) {
  const { cells, controls } = ctx.ui;
  const pieces = tiles(ctx);
  let picked = [];
  cells.forEach((cell, i) => {
    pressable(cell, `Picture ${i + 1}`, live(ctx, (e) => {
      picked = picked.includes(i) ? picked.filter((j) => j !== i) : [...picked.slice(-1), i];
      cells.forEach((other, j) => {
        other.classList.toggle("picked", picked.includes(j));
        other.setAttribute("aria-pressed", picked.includes(j));
      });
      ctx.emit("act.toggle", { cell: i }, e);
    }));
  });
  controls.submit.addEventListener("click", live(ctx, (e) => {
    if (picked.length !== 2) {
      ctx.say("Please select exactly two cells to swap.");
      return;
    }
    const [a, b] = picked;
    pieces[a].show(b);
    pieces[b].show(a);
    ctx.submit(e);
  }));
  return { ownsSubmit: true };
}

/** The arrows cycle through `count` states shown by show(index), from 0; the dots follow. */
function cycler(ctx, count, show) {
  let index = 0;
  const dots = Array.from({ length: count }, () => make("span", "option-dot", ctx.ui.dots));
  const draw = () => {
    show(index);
    dots.forEach((dot, i) => dot.classList.toggle("active", i === index));
  };
  for (const [name, delta] of [["prev", -1], ["next", 1]]) {
    ctx.ui.controls[name].addEventListener("click", live(ctx, (e) => {
      index = mod(index + delta, count);
      draw();
      ctx.emit("act.cycle", { delta }, e);
    }));
  }
  draw();
}

function preload(urls) {
  urls.forEach((url) => (new Image().src = url));
}

function option(ctx) {
  const urls = ctx.data.images.options;
  preload(urls);
  cycler(ctx, urls.length, (i) => (ctx.ui.image.src = urls[i]));
}

function rotate(ctx) {
  const urls = ctx.data.images.rotations;
  preload(Object.values(urls));
  cycler(ctx, 8, (i) => (ctx.ui.image.src = urls[String(i * 45)]));
}

/** Slide_Puzzle: the handle slides along its track and carries the piece along its row; the
 *  piece's corner is reported in natural pixels (unrounded, as if drawn at its exact width). */
function drag(ctx) {
  const { box } = ctx.ui;
  const slider = ctx.data.layout.slider;
  const handle0 = ctx.data.layout.controls.slider;
  const [startX, startY] = ctx.data.piece.start;
  const scale = box.w / box.natural_w;
  const ratio = slider.piece_range / slider.handle_range;
  const track = ctx.ui.track;
  make("span", "hint", track).textContent = "Drag the puzzle piece into place";
  const fill = make("span", "fill", track);
  const handle = place(make("div", "handle", ctx.ui.stage), handle0);
  handle.dataset.role = "slider";
  handle.textContent = "▶";
  const piece = place(make("img", "piece", ctx.ui.stage), slider.piece);
  Object.assign(piece, { src: ctx.data.images.piece, alt: "", draggable: false });
  piece.dataset.role = "piece";
  let offset = 0; // handle px from its start
  let grab = null;
  const show = () => {
    handle.style.left = `${handle0.x + offset}px`;
    piece.style.left = `${slider.piece.x + offset * ratio}px`;
    fill.style.width = `${offset + handle0.w / 2}px`;
  };
  const corner = () => ({ x: round2(startX + (offset * ratio) / scale), y: round2(startY) });
  const follow = (e) => {
    offset = clamp(grab.offset + ctx.pick(e).local.x - grab.x, 0, slider.handle_range);
    show();
  };
  handle.addEventListener("pointerdown", live(ctx, (e) => {
    if (e.button !== 0 || grab) return;
    handle.setPointerCapture(e.pointerId);
    grab = { x: ctx.pick(e).local.x, offset };
    ctx.ui.stage.classList.add("sliding");
    ctx.emit("act.drag_start", corner(), e);
  }));
  handle.addEventListener("pointermove", (e) => grab && follow(e));
  const drop = (e) => {
    if (!grab) return;
    follow(e);
    grab = null;
    ctx.ui.stage.classList.remove("sliding");
    ctx.emit("act.drag_end", corner(), e);
  };
  handle.addEventListener("pointerup", drop);
  handle.addEventListener("pointercancel", drop);
  // The keyboard: the arrow keys slide the handle (Shift: faster); letting go of the key drops.
  Object.assign(handle, { tabIndex: 0 });
  handle.setAttribute("role", "slider");
  handle.setAttribute("aria-label", "Slider: the arrow keys move the piece");
  let keyed = false;
  handle.addEventListener("keydown", live(ctx, (e) => {
    const direction = { ArrowLeft: -1, ArrowRight: 1 }[e.key];
    if (!direction || grab) return;
    e.preventDefault();
    if (!keyed) ctx.emit("act.drag_start", corner(), e);
    keyed = true;
    offset = clamp(offset + direction * (e.shiftKey ? 10 : 2), 0, slider.handle_range);
    show();
  }));
  handle.addEventListener("keyup", (e) => {
    if (!keyed || !["ArrowLeft", "ArrowRight"].includes(e.key) || ctx.locked()) return;
    keyed = false;
    ctx.emit("act.drag_end", corner(), e);
  });
  show();
}

/** Hold_Button: the HOLD button; its bar shows the progress the server reports. */
function hold(ctx) {
  const button = ctx.ui.controls.hold;
  const bar = make("span", "bar", button);
  let holding = false;
  button.addEventListener("contextmenu", (e) => e.preventDefault()); // long touch
  button.addEventListener("pointerdown", live(ctx, (e) => {
    if (e.button !== 0 || holding) return;
    holding = true;
    button.classList.add("holding");
    ctx.emit("act.hold_start", {}, e);
  }));
  const release = (e) => {
    if (!holding) return;
    holding = false;
    button.classList.remove("holding", "complete");
    ctx.emit("act.hold_end", {}, e);
    if (ctx.data.auto_submit) ctx.submit(e);
  };
  ["pointerup", "pointercancel", "pointerleave"].forEach((type) => button.addEventListener(type, release));
  // Space or Enter holds as a press does; a button's own click on Enter is not an answer.
  button.addEventListener("keydown", live(ctx, (e) => {
    if (!PRESS_KEYS.includes(e.key)) return;
    e.preventDefault();
    if (e.repeat || holding) return;
    holding = true;
    button.classList.add("holding");
    ctx.emit("act.hold_start", {}, e);
  }));
  button.addEventListener("keyup", (e) => PRESS_KEYS.includes(e.key) && release(e));
  button.addEventListener("blur", release);
  // Only the server knows how long is long enough; the bar shows what it reports.
  // Full: the button says so, so a person knows letting go now is right.
  const progress = (p) => {
    const value = clamp(Number(p) || 0, 0, 1);
    bar.style.width = `${value * 100}%`;
    button.classList.toggle("complete", value >= 1 && holding);
  };
  return { progress };
}

/** Dice_Count: the number box, focused on load as published; Enter submits. */
function text(ctx) {
  const input = ctx.ui.controls.text;
  input.addEventListener("input", live(ctx, (e) => ctx.emit("act.type", { text: input.value.slice(0, ctx.data.text_max) }, e)));
  input.addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    ctx.submit(e);
  });
  input.focus({ preventScroll: true });
}

export const widgets = { point, points, cells: cellSelect, swap, option, rotate, drag, hold, text };
