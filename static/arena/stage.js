// The fixed stage (1280x1080, from the layout in the page data): built from page data, scaled as a whole to fit the window.
// Every element sits at a layout rectangle in stage pixels, so a replay that clicks stage
// coordinates (at a 1280x1080 viewport, scale 1) hits what a person would.


const LABELS = {
  prev: "◀ Previous",
  next: "Next ▶",
  rotate_left: "⟲ Rotate left",
  rotate_right: "Rotate right ⟳",
  submit: "Submit",
  hold: "Press & hold",
};

// Too long for one line of a 130px button: the arrow glyph sits above the words.
const STACKED = { rotate_left: ["⟲", "Rotate left", true], rotate_right: ["⟳", "Rotate right", false] };

function stack(button, glyph, words, glyphFirst) {
  button.textContent = "";
  button.classList.add("stacked");
  const parts = [[glyph, "glyph"], [words, "words"]];
  if (!glyphFirst) parts.reverse(); // keeps textContent equal to the label, e.g. "Rotate right ⟳"
  parts.forEach(([text, cls], i) => {
    if (i) button.append(" ");
    make("span", cls, button).textContent = text;
  });
}

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

function picture(src, className, parent) {
  const img = make("img", className, parent);
  img.src = src;
  img.alt = "";
  img.draggable = false;
  return img;
}

function control(name, data) {
  if (name === "input") {
    const input = make("input", "control input");
    Object.assign(input, { type: "text", inputMode: "numeric", placeholder: "Type your answer", maxLength: data.text_max, autocomplete: "off" });
    return input;
  }
  const button = make("button", `control ${name}`);
  button.type = "button";
  button.textContent = LABELS[name] || name;
  if (name in STACKED) stack(button, ...STACKED[name]);
  return button;
}

/** Build the stage's elements; returns handles the widgets work with. */
export function buildStage(stage, data) {
  const { layout, images } = data;
  stage.dataset.widget = data.widget;
  place(stage, { x: 0, y: 0, ...layout.stage });
  const instruction = place(make("div", "instruction", stage), layout.instruction);
  instruction.textContent = data.instruction;
  if (layout.reference) place(picture(images.reference, "reference", stage), layout.reference);
  const image = place(picture(images.image, "main", stage), layout.image);
  // Markers, cells, tiles and the drag piece live in an overlay exactly over the main image.
  const overlay = place(make("div", "overlay", stage), layout.image);
  const controls = {};
  for (const [name, rect] of Object.entries(layout.controls || {})) {
    controls[name] = place(control(name, data), rect);
    stage.appendChild(controls[name]);
  }
  const status = place(make("div", "status", stage), layout.status);
  status.id = "status";
  status.dataset.state = "ready";
  return { stage, image, overlay, controls, status, box: layout.image };
}

/** Scale the stage to the window, centred; returns the scale. */
export function fitStage(stage) {
  // offsetWidth and offsetHeight are the stage's own size, before the scale transform.
  const [w, h] = [stage.offsetWidth, stage.offsetHeight];
  const s = Math.min(innerWidth / w, innerHeight / h);
  stage.style.transform = `scale(${s})`;
  stage.style.left = `${(innerWidth - w * s) / 2}px`;
  stage.style.top = `${(innerHeight - h * s) / 2}px`;
  return s;
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
