"""A stand-in CAPTCHA server for the tests (CI has no network): the Next-Gen dialect of the Flask
CAPTCHA app, with the hard cases of docs/hosted.md, written here from the facts (no code of theirs).

Run as its own process: `python tests/hosted/standin.py [--port 0] [--timeout-ms 2000]`; it prints
its port on the first line of stdout. Families:

- Dice_Roll_Path  stored (by puzzle_index, wrapping); truth in get_puzzle's debug_info; its page
                  loads three.js from a CDN
- Spooky_Size     stored, stateful single use: a check needs a get_puzzle first; a second check
                  answers "Puzzle state expired"; the check's details carry the target
- Red_Dot         made from a seed, multi-step (3 hits: continue with next_dot, then completed or
                  failed), server-timed: a hit later than timeout + 200 ms fails
- Static_Jigsaw   made from a seed, stateful; the check's details carry correct_positions; the page
                  numbers pieces by display order, so a page-style answer is never accepted
- Mirror          listed, no data: get_puzzle answers 404

Also: check_answer's `correct_answer`, the global /api/last_result, /api/get_ground_truth (which the
page posts on every click), truth files served as files (/captcha_data/<T>/ground_truth.json), a
page with no address (`/` alone asks mode=sequential). The truth values are distinctive (4817,
417.5, ...) so a test can search every body for them.

Test-only routes: POST /_standin/advance?ms=N moves the server's clock (late hits without
sleeping); GET /_standin/log lists the API calls received: route, family, status and error (checks:
also the puzzle id, the answer and the `correct` it answered).
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import random
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

FAMILIES = ["Dice_Roll_Path", "Spooky_Size", "Red_Dot", "Static_Jigsaw", "Mirror"]
STORED: dict[str, dict[str, dict[str, Any]]] = {
    "Dice_Roll_Path": {
        f"dice_roll_{i:04d}": {"answer_top": top, "reference_image": f"dice_roll_{i:04d}.png", "prompt": "Top face?"}
        for i, top in enumerate((4817, 5923, 6131))
    },
    "Spooky_Size": {
        "spooky_size_0000": {"target_position": {"x": 401.5, "y": 211.5, "diameter": 32}, "prompt": "Largest?"},
        "spooky_size_0001": {"target_position": {"x": 97.25, "y": 301.75, "diameter": 40}, "prompt": "Largest?"},
    },
}
RED_DOT_HITS = 3
RED_DOT_DIAMETER = 40
JIGSAW_GRID = (2, 2)
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def red_dots(seed: int) -> list[dict[str, float]]:
    """The dots of a Red_Dot puzzle: top-left corners in a 420x320 area."""
    rng = random.Random(f"red-dot-{seed}")
    return [{"x": round(rng.uniform(24, 356), 3), "y": round(rng.uniform(24, 256), 3)} for _ in range(RED_DOT_HITS)]


def jigsaw(seed: int) -> dict[str, Any]:
    """A Static_Jigsaw puzzle: pieces in shuffled order, and where each original piece belongs."""
    rows, cols = JIGSAW_GRID
    rng = random.Random(f"jigsaw-{seed}")
    pieces = [f"data:image/png;base64,{base64.b64encode(f'piece {seed}/{i}'.encode()).decode()}" for i in range(4)]
    order = list(range(rows * cols))
    while order == sorted(order):  # never the identity: a display-order answer must be wrong
        rng.shuffle(order)
    positions = [{"piece_index": i, "grid_row": i // cols, "grid_col": i % cols} for i in range(rows * cols)]
    return {"pieces": [pieces[i] for i in order], "shuffled_order": order, "correct_positions": positions}


def page_style_jigsaw_answer(seed: int) -> list[dict[str, int]]:
    """What the page submits for a correct-looking assembly: pieces numbered by display index,
    because the server no longer sends shuffled_order (Next-Gen's jigsaw fault)."""
    puzzle = jigsaw(seed)
    cols = JIGSAW_GRID[1]
    placements = []
    for display, original in enumerate(puzzle["shuffled_order"]):
        row, col = original // cols, original % cols  # where the person rightly drops it
        placements.append({"piece_index": display, "grid_row": row, "grid_col": col})
    return placements


def truth_values() -> list[str]:
    """Every truth value this server holds, as text a body must never carry to a page."""
    found = [str(p["answer_top"]) for p in STORED["Dice_Roll_Path"].values()]
    for puzzle in STORED["Spooky_Size"].values():
        target = puzzle["target_position"]
        radius = target["diameter"] / 2
        found += [repr(target["x"] + radius), repr(target["y"] + radius)]
    # The jigsaw's truth travels in "Piece i at (r, c)" strings and as TRUTH_FIELDS; the stand-in
    # never sends shuffled_order (as Next-Gen no longer does), so it is not searched for.
    return found + ["Piece 0 at", "Target at"]


# Field names that carry the jigsaw's truth in a JSON body (a page's own script names them in the
# answer it builds, so they are searched for in JSON bodies only).
TRUTH_FIELDS = ("correct_positions", "grid_row")


class Server:
    """The stand-in's state: what its get_puzzle calls left in memory, its clock, its last result."""

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms
        self.lock = threading.Lock()
        self.clock_offset = 0.0
        self.spooky: dict[str, dict[str, float]] = {}
        self.red_dot: dict[str, dict[str, Any]] = {}
        self.jigsaws: dict[str, dict[str, Any]] = {}
        self.last_result: dict[str, Any] = {}
        self.sequential = 0
        self.calls: list[dict[str, Any]] = []

    def now(self) -> float:
        return time.monotonic() + self.clock_offset

    # get_puzzle ------------------------------------------------------------------------------
    def get_puzzle(self, query: dict[str, str]) -> tuple[int, Any]:
        family = query.get("type")
        if query.get("mode") == "sequential" and not family:
            family = FAMILIES[self.sequential % len(FAMILIES)]
            self.sequential += 1
        if family not in FAMILIES:
            return 400, {"error": f"Invalid puzzle type: {family}"}
        seed = int(query.get("seed", "0"))
        if family == "Red_Dot":
            return 200, self._red_dot(seed)
        if family == "Static_Jigsaw":
            return 200, self._jigsaw(seed)
        if family not in STORED:
            return 404, {"error": f"No puzzles found for type: {family}"}
        keys = sorted(STORED[family])
        key = keys[int(query.get("puzzle_index", "0")) % len(keys)]
        return 200, self._stored(family, key)

    def _stored(self, family: str, key: str) -> dict[str, Any]:
        puzzle = STORED[family][key]
        body: dict[str, Any] = {"puzzle_type": family, "puzzle_id": key, "prompt": puzzle["prompt"]}
        if family == "Spooky_Size":
            target = puzzle["target_position"]
            radius = target["diameter"] / 2
            self.spooky[key] = {"x": target["x"] + radius, "y": target["y"] + radius, "radius": radius}
            body.update(media_path=f"/captcha_data/{family}/{key}.gif", input_type="spooky_size_click")
        else:
            body.update(
                input_type="number",
                reference_image=f"/captcha_data/{family}/{puzzle['reference_image']}",
                debug_info=f"Type: {family}, Puzzle: {key}, Answer: {puzzle['answer_top']}",
            )
        body["type_stats"] = {"total_puzzles": len(STORED[family]), "current_solved": 0, "current_correct": 0}
        return body

    def _red_dot(self, seed: int) -> dict[str, Any]:
        puzzle_id, dots = f"red_dot_seed_{seed}", red_dots(seed)
        radius = RED_DOT_DIAMETER / 2
        self.red_dot[puzzle_id] = {"dots": dots, "index": 0, "started": self.now(), "radius": radius}
        first = {**dots[0], "diameter": RED_DOT_DIAMETER}
        return {
            "puzzle_type": "Red_Dot",
            "puzzle_id": puzzle_id,
            "prompt": "Click the red dot before it disappears.",
            "input_type": "red_dot_click",
            "area": {"width": 420, "height": 320},
            "dot": first,
            "timeout_ms": self.timeout_ms,
            "required_hits": RED_DOT_HITS,
            "hits_completed": 0,
            "debug_info": f"{RED_DOT_HITS} hit(s). First dot at ({first['x']:.1f}, {first['y']:.1f})",
        }

    def _jigsaw(self, seed: int) -> dict[str, Any]:
        puzzle_id, puzzle = f"jigsaw_seed_{seed}", jigsaw(seed)
        self.jigsaws[puzzle_id] = puzzle
        return {
            "puzzle_type": "Static_Jigsaw",
            "puzzle_id": puzzle_id,
            "prompt": "Drag the puzzle pieces to complete the jigsaw puzzle",
            "input_type": "jigsaw_puzzle",
            "pieces": puzzle["pieces"],  # shuffled_order is not sent (as Next-Gen no longer does)
            "grid_size": list(JIGSAW_GRID),
            "piece_size": 150,
        }

    # check_answer ----------------------------------------------------------------------------
    def check_answer(self, data: dict[str, Any]) -> tuple[int, Any]:
        family, puzzle_id, answer = data.get("puzzle_type"), data.get("puzzle_id"), data.get("answer")
        if not puzzle_id or (answer is None and family != "Static_Jigsaw"):
            return 400, {"error": "Missing puzzle_id or answer"}
        checker = {
            "Dice_Roll_Path": self._check_dice,
            "Spooky_Size": self._check_spooky,
            "Red_Dot": self._check_red_dot,
            "Static_Jigsaw": self._check_jigsaw,
        }.get(str(family))
        if checker is None:
            return 400, {"error": "Invalid puzzle ID"}
        return checker(str(puzzle_id), answer)

    def _verdict(self, family: str, puzzle_id: str, answer: Any, correct: bool, said: Any, **extra: Any) -> Any:
        body = {"correct": correct, "user_answer": answer, "correct_answer": said, "elapsed_time": 0.0}
        body["action_sequence"] = []
        self.last_result = {
            "puzzle_type": family,
            "puzzle_id": puzzle_id,
            "correct": correct,
            "user_answer": answer,
            "correct_answer": said,
            "timestamp": datetime.now().isoformat(),
        }
        return 200, {**body, **extra}

    def _check_dice(self, puzzle_id: str, answer: Any) -> tuple[int, Any]:
        puzzle = STORED["Dice_Roll_Path"].get(puzzle_id)
        if puzzle is None:
            return 400, {"error": "Invalid puzzle ID"}
        try:
            given = int(answer)
        except (TypeError, ValueError):
            return 400, {"error": "Invalid answer format for Dice_Roll_Path"}
        top = puzzle["answer_top"]
        return self._verdict("Dice_Roll_Path", puzzle_id, answer, given == top, top)

    def _check_spooky(self, puzzle_id: str, answer: Any) -> tuple[int, Any]:
        state = self.spooky.get(puzzle_id)
        if state is None:
            return 400, {"error": "Puzzle state expired"}
        if not isinstance(answer, dict):
            return 400, {"error": "Invalid answer format for Spooky_Size"}
        try:
            x, y = float(answer["position"]["x"]), float(answer["position"]["y"])
        except (KeyError, TypeError, ValueError):
            return 400, {"error": "Invalid click position for Spooky_Size"}
        del self.spooky[puzzle_id]
        distance = math.hypot(x - state["x"], y - state["y"])
        correct = distance <= state["radius"] + max(4.0, state["radius"] * 0.15)
        said = f"Target at ({state['x']:.0f}, {state['y']:.0f}), radius {state['radius']:.0f}px"
        details = {"target_x": state["x"], "target_y": state["y"], "radius": state["radius"], "distance": distance}
        return self._verdict("Spooky_Size", puzzle_id, answer, correct, said, details=details)

    def _check_red_dot(self, puzzle_id: str, answer: Any) -> tuple[int, Any]:
        state = self.red_dot.get(puzzle_id)
        if state is None:
            return 400, {"error": "Puzzle state expired"}
        if not isinstance(answer, dict):
            return 400, {"error": "Invalid answer format for Red_Dot"}
        if answer.get("hit_index", state["index"]) != state["index"]:
            del self.red_dot[puzzle_id]
            return 200, {"correct": False, "status": "failed", "message": "Unexpected click order. Puzzle reset."}
        if not self._hit(state, answer):
            del self.red_dot[puzzle_id]
            return 200, {"correct": False, "status": "failed", "message": "Missed the red dot in time."}
        state["index"] += 1
        if state["index"] >= RED_DOT_HITS:
            del self.red_dot[puzzle_id]
            details = {"hits_completed": RED_DOT_HITS, "required_hits": RED_DOT_HITS}
            said = f"Completed {RED_DOT_HITS}/{RED_DOT_HITS} hits."
            return self._verdict("Red_Dot", puzzle_id, answer, True, said, status="completed", details=details)
        state["started"] = self.now()
        following = {**state["dots"][state["index"]], "diameter": RED_DOT_DIAMETER}
        return 200, {
            "correct": False,
            "status": "continue",
            "hits_completed": state["index"],
            "required_hits": RED_DOT_HITS,
            "next_dot": following,
            "timeout_ms": self.timeout_ms,
        }

    def _hit(self, state: dict[str, Any], answer: dict[str, Any]) -> bool:
        late = (self.now() - state["started"]) * 1000 > self.timeout_ms + 200
        try:
            x, y = float(answer["position"]["x"]), float(answer["position"]["y"])
        except (KeyError, TypeError, ValueError):
            return False
        dot = state["dots"][state["index"]]
        radius = state["radius"]
        distance = math.hypot(x - (dot["x"] + radius), y - (dot["y"] + radius))
        return bool(answer.get("clicked")) and not late and distance <= radius + max(4.0, radius * 0.15)

    def _check_jigsaw(self, puzzle_id: str, answer: Any) -> tuple[int, Any]:
        state = self.jigsaws.pop(puzzle_id, None)
        if state is None:
            return 400, {"error": "Invalid puzzle ID"}
        positions = state["correct_positions"]
        said = "Correct positions: " + "; ".join(
            f"Piece {p['piece_index']} at ({p['grid_row']}, {p['grid_col']})" for p in positions
        )
        placed = {}
        for placement in answer if isinstance(answer, list) else []:
            if isinstance(placement, dict):
                placed[placement.get("piece_index")] = (placement.get("grid_row"), placement.get("grid_col"))
        correct = len(placed) == len(positions) and all(
            placed.get(p["piece_index"]) == (p["grid_row"], p["grid_col"]) for p in positions
        )
        extra = {} if correct else {"details": {"user_placements": answer, "correct_positions": positions}}
        return self._verdict("Static_Jigsaw", puzzle_id, answer, correct, said, **extra)

    def ground_truth(self, data: dict[str, Any]) -> tuple[int, Any]:
        puzzle = STORED.get(str(data.get("puzzle_type")), {}).get(str(data.get("puzzle_id")))
        if puzzle is None:
            return 400, {"error": "Invalid puzzle ID"}
        return 200, {"answer": puzzle.get("answer_top", puzzle.get("target_position")), "question": puzzle["prompt"]}


PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Stand-in CAPTCHA</title>
<script src="https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js"></script>
<style>
  body { font-family: sans-serif; margin: 16px; }
  .red-dot-area { position: relative; background: #f4f4f4; border: 1px solid #333; }
  .red-dot { position: absolute; border-radius: 50%; background: #d00; cursor: pointer; }
  .red-dot-hidden { display: none; }
  .spooky-size-click-area { position: relative; background: #000; cursor: crosshair; }
  .spooky-size-click-area img { width: 100%; height: 100%; pointer-events: none; }
  .jigsaw-grid { display: grid; grid-template-columns: repeat(2, 84px); gap: 4px; margin: 8px 0; }
  .jigsaw-grid-cell { width: 80px; height: 80px; border: 2px dashed #ccc; }
  .jigsaw-tray-piece { display: inline-block; width: 64px; height: 64px; margin: 4px; border: 1px solid #888; }
  .jigsaw-tray-piece img { width: 100%; height: 100%; }
</style>
</head><body>
<h2 id="puzzle-prompt"></h2>
<div class="puzzle-image-container" id="puzzle-container"></div>
<div class="input-group" hidden><input id="user-answer" type="text" autocomplete="off"></div>
<button id="submit-answer" hidden>Submit</button>
<div id="result-message"></div>
<script src="/static/js/standin.js"></script></body></html>
"""

# The page's script, with the DOM of Next-Gen's page for these input types (ids and classes read
# from its static/js/script.js): a number typed into #user-answer, a click on the Spooky_Size area,
# Red_Dot's dot clicked hit after hit, jigsaw pieces dragged from the tray to the grid (numbered by
# display index: the server sends no shuffled_order). Dice_Roll_Path needs three.js, as Next-Gen's does.
SCRIPT = """// Reads its address from the URL; with none, asks for the next puzzle (no address at all).
const params = new URLSearchParams(window.location.search);
let url = '/api/get_puzzle?mode=sequential';
if (params.get('type')) {
  url = '/api/get_puzzle?type=' + encodeURIComponent(params.get('type'));
  if (params.get('puzzle_index') !== null) url += '&puzzle_index=' + params.get('puzzle_index');
  if (params.get('seed') !== null) url += '&seed=' + params.get('seed');
}
const container = document.getElementById('puzzle-container');
const inputGroup = document.querySelector('.input-group');
const answerInput = document.getElementById('user-answer');
const submitButton = document.getElementById('submit-answer');
const result = document.getElementById('result-message');
let current = null;
let submitAnswer = null;

function post(path, body) {
  return fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)})
    .then(r => r.json());
}
function show(data) {
  result.textContent = data.error ? 'Error: ' + data.error : (data.correct ? 'Correct!' : 'Incorrect.');
}
function check(answer) {
  return post('/api/check_answer', {puzzle_type: current.puzzle_type, puzzle_id: current.puzzle_id,
                                    answer: answer, elapsed_time: 1.5});
}
submitButton.addEventListener('click', () => { if (submitAnswer) check(submitAnswer()).then(show); });

const setups = {
  number(data) {
    const die = new THREE.Object3D();  // the 3-D die: needs three.js
    die.name = data.puzzle_id;
    const img = document.createElement('img');
    img.src = data.reference_image;
    container.appendChild(img);
    inputGroup.hidden = submitButton.hidden = false;
    submitAnswer = () => answerInput.value.trim();
  },
  spooky_size_click(data) {
    const area = document.createElement('div');
    area.className = 'spooky-size-click-area';
    area.style.width = (data.canvas_width || 600) + 'px';
    area.style.height = (data.canvas_height || 400) + 'px';
    area.innerHTML = '<img alt="Spooky Size Puzzle">';
    area.firstChild.src = data.media_path;
    let answered = false;
    area.addEventListener('click', (event) => {
      if (answered) return;
      answered = true;
      const rect = area.getBoundingClientRect();
      check({position: {x: event.clientX - rect.left, y: event.clientY - rect.top}}).then(show);
    });
    container.appendChild(area);
  },
  red_dot_click(data) {
    const area = document.createElement('div');
    area.className = 'red-dot-area';
    area.style.width = data.area.width + 'px';
    area.style.height = data.area.height + 'px';
    const dot = document.createElement('div');
    dot.className = 'red-dot';
    area.appendChild(dot);
    container.appendChild(area);
    let hits = data.hits_completed || 0;
    let timer = null;
    const place = (target, timeoutMs) => {
      dot.style.width = dot.style.height = target.diameter + 'px';
      dot.style.left = target.x + 'px';
      dot.style.top = target.y + 'px';
      dot.classList.remove('red-dot-hidden');
      clearTimeout(timer);
      timer = setTimeout(() => send({clicked: false}), timeoutMs);
    };
    const send = (payload) => {
      clearTimeout(timer);
      dot.classList.add('red-dot-hidden');
      check({...payload, hit_index: hits}).then((reply) => {
        if (reply.status === 'continue') {
          hits = reply.hits_completed;
          place(reply.next_dot, reply.timeout_ms);
        } else {
          show(reply);
        }
      });
    };
    dot.addEventListener('click', (event) => {
      event.stopPropagation();
      const rect = area.getBoundingClientRect();
      send({clicked: true, position: {x: event.clientX - rect.left, y: event.clientY - rect.top}});
    });
    place(data.dot, data.timeout_ms);
  },
  jigsaw_puzzle(data) {
    const [rows, cols] = data.grid_size;
    const order = data.shuffled_order || data.pieces.map((_, i) => i);  // the server no longer sends it
    const placements = [];
    const grid = document.createElement('div');
    grid.className = 'jigsaw-grid';
    for (let row = 0; row < rows; row++) {
      for (let col = 0; col < cols; col++) {
        const cell = document.createElement('div');
        cell.className = 'jigsaw-grid-cell';
        cell.dataset.row = row;
        cell.dataset.col = col;
        cell.addEventListener('dragover', (event) => event.preventDefault());
        cell.addEventListener('drop', (event) => {
          event.preventDefault();
          const display = parseInt(event.dataTransfer.getData('text/plain'));
          placements.push({piece_index: order[display], grid_row: row, grid_col: col});
          const piece = document.querySelector('.jigsaw-tray-piece[data-piece-index="' + display + '"]');
          if (piece) cell.appendChild(piece);
          submitButton.hidden = placements.length < data.pieces.length;
        });
        grid.appendChild(cell);
      }
    }
    const tray = document.createElement('div');
    data.pieces.forEach((src, display) => {
      const piece = document.createElement('div');
      piece.className = 'jigsaw-tray-piece';
      piece.draggable = true;
      piece.dataset.pieceIndex = display;
      piece.innerHTML = '<img alt="piece" draggable="false">';
      piece.firstChild.src = src;
      piece.addEventListener('dragstart', (event) => event.dataTransfer.setData('text/plain', String(display)));
      tray.appendChild(piece);
    });
    container.append(grid, tray);
    submitAnswer = () => placements;
  },
};

fetch(url).then(r => r.json()).then(data => {
  current = data;
  document.getElementById('puzzle-prompt').textContent = data.prompt || data.error || '';
  try {
    setups[data.input_type](data);
  } catch (error) {
    result.textContent = 'Error: ' + error.message;  // e.g. "THREE is not defined" with no three.js
  }
});
// Like a page that colours its marker from the truth: it asks a truth route on every click.
container.addEventListener('click', () => {
  if (current) post('/api/get_ground_truth', {puzzle_type: current.puzzle_type, puzzle_id: current.puzzle_id});
});
"""


def make_handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def _answer(self, method: str) -> None:
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            with server.lock:
                status, body, kind = self._route(method, parts.path, query)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _route(self, method: str, path: str, query: dict[str, str]) -> tuple[int, bytes, str]:
            if path == "/":
                return 200, PAGE.encode(), "text/html; charset=utf-8"
            if path == "/static/js/standin.js":
                return 200, SCRIPT.encode(), "text/javascript"
            if path.startswith("/captcha_data/"):
                return self._file(path)
            status, data = self._api(method, path, query)
            return status, json.dumps(data).encode(), "application/json"

        def _api(self, method: str, path: str, query: dict[str, str]) -> tuple[int, Any]:
            if path == "/api/puzzle_types":
                return 200, {"types": FAMILIES, "current_index": server.sequential}
            if path == "/api/get_puzzle":
                return self._logged("get", query.get("type"), server.get_puzzle(query))
            if path == "/api/last_result":
                return 200, {"has_result": bool(server.last_result), **server.last_result}
            if path == "/_standin/log":
                return 200, server.calls
            if method != "POST":
                return 404, {"error": "not found"}
            if path == "/_standin/advance":
                server.clock_offset += float(query.get("ms", "0")) / 1000
                return 200, {"offset_ms": server.clock_offset * 1000}
            if path == "/api/clear_last_result":
                server.last_result = {}
                return 200, {"status": "success"}
            data = self._json()
            if path == "/api/check_answer":
                reply = self._logged("check", data.get("puzzle_type"), server.check_answer(data))
                # What it judged, for a test to hold a stored verdict to the stand-in's own word.
                said = reply[1] if isinstance(reply[1], dict) else {}
                server.calls[-1].update(
                    puzzle_id=data.get("puzzle_id"), answer=data.get("answer"), correct=said.get("correct")
                )
                return reply
            if path == "/api/get_ground_truth":
                return server.ground_truth(data)
            return 404, {"error": "not found"}

        def _logged(self, route: str, family: Any, answer: tuple[int, Any]) -> tuple[int, Any]:
            status, body = answer
            error = body.get("error") if isinstance(body, dict) else None
            server.calls.append({"route": route, "family": family, "status": status, "error": error})
            return answer

        def _file(self, path: str) -> tuple[int, bytes, str]:
            _, _, family, name = path.split("/", 3)
            if name == "ground_truth.json" and family in STORED:  # truth served as a plain file
                return 200, json.dumps(STORED[family]).encode(), "application/json"
            if name.endswith((".png", ".gif")):
                return 200, PIXEL_PNG, "image/png"
            return 404, b'{"error": "not found"}', "application/json"

        def _json(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                data = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                return {}
            return data if isinstance(data, dict) else {}

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the tests read bodies, not logs
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--timeout-ms", type=int, default=2000, help="Red_Dot's time per hit (the peer adds 200 ms)")
    args = parser.parse_args()
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(Server(args.timeout_ms)))
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
