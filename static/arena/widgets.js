// One widget per page_data.widget. A widget turns input into visible state and semantic
// actions (ctx.emit); it never knows whether the answer is right.
//
// ctx: {data, ui, emit(kind, fields, event), submit(event), locked(), pick(event)}
// pick(event) -> {natural: {x, y} rounded natural pixels, local: {x, y} overlay pixels}.
// A widget may return {progress(p)} to receive the server's hold progress.
import { make, round2 } from "./stage.js";

const mod = (a, n) => ((a % n) + n) % n;
const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

function at(el, p) {
  el.style.left = `${p.x}px`;
  el.style.top = `${p.y}px`;
  return el;
}

/** An action handler that does nothing once the attempt is submitted. */
const live = (ctx, fn) => (e) => !ctx.locked() && fn(e);

/** rows x cols cell elements laid over the main image, row-major. */
function cells(ctx, className) {
  const [rows, cols] = ctx.data.layout.grid;
  const list = [];
  for (let i = 0; i < rows * cols; i++) {
    const cell = make("div", className, ctx.ui.overlay);
    const r = Math.floor(i / cols), c = i % cols;
    Object.assign(cell.style, {
      left: `${(c * 100) / cols}%`, top: `${(r * 100) / rows}%`, width: `${100 / cols}%`, height: `${100 / rows}%`,
    });
    cell.dataset.cell = i;
    list.push(cell);
  }
  return list;
}

function point(ctx) {
  const dot = make("div", "dot", ctx.ui.overlay);
  dot.hidden = true;
  ctx.ui.overlay.addEventListener("click", live(ctx, (e) => {
    const { natural, local } = ctx.pick(e);
    at(dot, local).hidden = false;
    ctx.emit("click", natural, e);
    if (ctx.data.auto_submit) ctx.submit(e);
  }));
}

function points(ctx) {
  let count = 0;
  ctx.ui.overlay.addEventListener("click", live(ctx, (e) => {
    const { natural, local } = ctx.pick(e);
    at(make("div", "marker", ctx.ui.overlay), local).textContent = ++count;
    ctx.emit("click", natural, e);
  }));
}

function cellSelect(ctx) {
  cells(ctx, "cell").forEach((cell, i) => {
    cell.addEventListener("click", live(ctx, (e) => {
      cell.classList.toggle("on");
      ctx.emit("toggle", { cell: i }, e);
    }));
  });
}

function swap(ctx) {
  const [rows, cols] = ctx.data.layout.grid;
  const { w, h } = ctx.ui.box;
  const tiles = cells(ctx, "tile");
  const shown = tiles.map((_, i) => i); // shown[position] = source tile drawn there
  let picked = null;
  const draw = () => tiles.forEach((tile, p) => {
    const r = Math.floor(shown[p] / cols), c = shown[p] % cols;
    tile.style.backgroundPosition = `${(-c * w) / cols}px ${(-r * h) / rows}px`;
  });
  tiles.forEach((tile, i) => {
    tile.style.backgroundImage = `url("${ctx.data.images.image}")`;
    tile.style.backgroundSize = `${w}px ${h}px`;
    tile.addEventListener("click", live(ctx, (e) => {
      if (picked === null) {
        picked = i;
        tile.classList.add("picked");
        return;
      }
      tiles[picked].classList.remove("picked");
      if (picked !== i) {
        [shown[picked], shown[i]] = [shown[i], shown[picked]];
        draw();
        ctx.emit("swap", { a: picked, b: i }, e);
      }
      picked = null;
    }));
  });
  draw();
}

/** Arrow cycling through `count` states shown by show(index); starts at 0. */
function cycler(ctx, [back, forward], count, show) {
  let index = 0;
  for (const [name, delta] of [[back, -1], [forward, 1]]) {
    ctx.ui.controls[name]?.addEventListener("click", live(ctx, (e) => {
      index = mod(index + delta, count);
      show(index);
      ctx.emit("cycle", { delta }, e);
    }));
  }
  show(0);
}

function preload(urls) {
  urls.forEach((url) => (new Image().src = url));
}

function option(ctx) {
  const urls = ctx.data.images.options;
  preload(urls);
  cycler(ctx, ["prev", "next"], urls.length, (i) => (ctx.ui.image.src = urls[i]));
}

function rotate(ctx) {
  const urls = ctx.data.images.rotations;
  preload(Object.values(urls));
  cycler(ctx, ["rotate_left", "rotate_right"], 8, (i) => (ctx.ui.image.src = urls[String(i * 45)]));
}

function drag(ctx) {
  const { box } = ctx.ui;
  const [pw, ph] = ctx.data.piece.size;
  const kx = box.w / box.natural_w, ky = box.h / box.natural_h; // stage px per natural px
  let [x, y] = ctx.data.piece.start;
  let grab = null;
  const piece = make("img", "piece", ctx.ui.overlay);
  Object.assign(piece, { src: ctx.data.images.piece, alt: "", draggable: false });
  Object.assign(piece.style, { width: `${pw * kx}px`, height: `${ph * ky}px` });
  const show = () => at(piece, { x: x * kx, y: y * ky });
  const corner = () => ({ x: round2(x), y: round2(y) });
  const follow = (e) => {
    const p = ctx.pick(e).local; // pointer delta in overlay px, converted to natural px
    x = clamp(grab.x + (p.x - grab.p.x) / kx, 0, box.natural_w - pw);
    y = clamp(grab.y + (p.y - grab.p.y) / ky, 0, box.natural_h - ph);
    show();
  };
  piece.addEventListener("pointerdown", live(ctx, (e) => {
    if (e.button !== 0 || grab) return;
    piece.setPointerCapture(e.pointerId);
    grab = { p: ctx.pick(e).local, x, y };
    piece.classList.add("dragging");
    ctx.emit("drag_start", corner(), e);
  }));
  piece.addEventListener("pointermove", (e) => grab && follow(e));
  const drop = (e) => {
    if (!grab) return;
    follow(e);
    grab = null;
    piece.classList.remove("dragging");
    ctx.emit("drag_end", corner(), e);
  };
  piece.addEventListener("pointerup", drop);
  piece.addEventListener("pointercancel", drop);
  show();
}

function hold(ctx) {
  const button = ctx.ui.controls.hold;
  button.textContent = "";
  const fill = make("span", "fill", button);
  make("span", "label", button).textContent = "Press & hold";
  let holding = false;
  button.addEventListener("contextmenu", (e) => e.preventDefault()); // long touch
  button.addEventListener("pointerdown", live(ctx, (e) => {
    if (e.button !== 0 || holding) return;
    holding = true;
    button.classList.add("holding");
    ctx.emit("hold_start", {}, e);
  }));
  const release = (e) => {
    if (!holding) return;
    holding = false;
    button.classList.remove("holding");
    ctx.emit("hold_end", {}, e);
    if (ctx.data.auto_submit) ctx.submit(e);
  };
  ["pointerup", "pointercancel", "pointerleave"].forEach((type) => button.addEventListener(type, release));
  // Only the server knows how long is long enough; the bar shows what it reports.
  return { progress: (p) => (fill.style.width = `${clamp(Number(p) || 0, 0, 1) * 100}%`) };
}

function text(ctx) {
  const input = ctx.ui.controls.input;
  input.addEventListener("input", live(ctx, (e) => ctx.emit("type", { text: input.value.slice(0, ctx.data.text_max) }, e)));
  input.addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    ctx.submit(e);
  });
}

export const widgets = { point, points, cells: cellSelect, swap, option, rotate, drag, hold, text };
