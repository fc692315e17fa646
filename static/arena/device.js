// The join page's device check (as jsPsych's browser-check): can this window show the puzzles
// large enough to read? The puzzle page shows the published page (its size comes in the data the
// server renders beside this script, #device-check-data) scaled to the window, or on a small
// window the puzzle alone (stage.js fitStage, puzzleRegion); this computes the scale a
// typical puzzle would get here, below the chrome, and says what to do about a small one.
import { READABLE_SCALE as READABLE } from "./stage.js";

const CHROME_H = 48; // the person's chrome above the stage (play.css .chrome min-height)
const TYPICAL_PUZZLE = { w: 700, h: 600 }; // most puzzles with their controls and instruction (stage.js puzzleRegion)
const TOO_SMALL = 0.3; // below this the text is under 5 px: the study cannot be done here

const box = document.getElementById("device-check");
const { stage } = JSON.parse(document.getElementById("device-check-data")?.textContent || "null") || {};
const start = document.querySelector("form button[type=submit]");

function scaleHere() {
  const w = document.documentElement.clientWidth, h = document.documentElement.clientHeight - CHROME_H;
  const whole = Math.min(w / stage.w, h / stage.h);
  const puzzle = Math.min(w / TYPICAL_PUZZLE.w, h / TYPICAL_PUZZLE.h);
  return Math.max(whole, puzzle);
}

function check() {
  const s = scaleHere();
  const touch = matchMedia("(pointer: coarse)").matches;
  const portrait = innerHeight > innerWidth;
  let state = "ok", text = "";
  if (s < TOO_SMALL) {
    state = "blocked";
    text = "This window is too small for the puzzles. Please use a larger screen or make the window bigger.";
  } else if (s < READABLE) {
    state = "warn";
    text = touch && portrait
      ? "The puzzles will be small on this screen: turn your phone sideways, or zoom in with two fingers while you work."
      : "The puzzles will be small in this window: make it larger (or full screen) if you can.";
  }
  box.dataset.state = state;
  box.dataset.scale = s.toFixed(2);
  box.textContent = text;
  box.hidden = state === "ok";
  if (start) start.disabled = state === "blocked";
}

if (box && stage) {
  check();
  addEventListener("resize", check);
}
