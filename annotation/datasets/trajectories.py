"""People's attempts as screenshot-action trajectories in the published training layout, with the
continuous pointer path between the actions.

`trajectories export --study S --out DIR` writes, for each submitted human attempt of the study
(excluded annotators and attempts without input evidence left out unless asked):

    DIR/run_summary.json                    as the agent export's: totals, accuracy, puzzles[]
    DIR/arena_export.json                   the study, what was left out and why, the rules below
    DIR/<folder lower>/<folder>_<id stem>/attempt_<uid>/
        summary.json  metafile.json  sft_data.json  screenshots/screenshot_step_<n>.png
        arena_pointer.npz                   the pointer path: t, x, y, buttons, pointer, kind, segment
        arena_reasoning.json                with --reason-with: every text asked for, kept or not

the same shape as `agent export` (annotation/agents/exports.py), with "human" as the agent.

Actions. A person's stored raw events become the published computer-use actions, in page
coordinates (the stage at 1280x1080 and scale 1, where a stage pixel is a page pixel):
- a pointer press and its release: `click` (button left, right or middle), or `drag` when the
  pointer went more than DRAG_PX from where it was pressed, or `hold` when it stayed down
  HOLD_MS or longer (or the page logged a hold);
- keys: printable keys in a row, `type_text` with what they typed; any other key in KEYS,
  `press_key`; modifier keys alone are no action;
- presses outside the stage (a person's chrome: the flag, the pause link) are left out.
Each step names the semantic actions the page logged during it (`arena_acts`); a submit more than
PAGE_SUBMIT_MS after the last action is the page's own (a study's time limit) and is no step's.

Screenshots. The stored events are replayed on the live page in headless Chromium: a fresh
attempt of a replay participant on the same puzzle (its page is the stage alone, 1280x1080 at
scale 1), each action done with Playwright's mouse and keyboard where the person did it (a drag
through up to DRAG_SAMPLES of the person's own samples, a hold for as long as it was held), as
fast as the page takes it. Step 0 is the page before the first action, step n the page after
the n-th, taken with transitions and animations off (the page where it settles). The replay's
own attempt is scored by the server like any other; whether it reached the person's answer
(numbers within ANSWER_TOLERANCE_PX: a person's page is scaled, so a press lands between
pixels) and verdict is kept (`arena_replay`), and the attempt is deleted once rendered.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import math
import shutil
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from asgiref.sync import sync_to_async
from django.db.models import QuerySet
from playwright.async_api import Page

from annotation.agents.browser import NotSubmitted, on_pages, open_attempt, wait_submitted
from annotation.agents.exports import action_string, run_summary, sft_user, summary_entry, write_json, write_published
from annotation.agents.prompts import TOOLS_PROMPT
from annotation.agents.protocols.base import first_text
from annotation.agents.published import id_stem, puzzle_file_id, type_folder
from annotation.datasets.reasoning import Reasoner
from annotation.live.attempts import attempt_start, system_participant
from annotation.live.motion import KIND_CODES, POINTER_TYPES, pointer_path
from annotation.models import Attempt, Enrollment, Event, Participant, Study
from puzzles.layout import STAGE_H, STAGE_W

AGENT = "human"
DRAG_PX = 6.0  # a press that travels further is a drag
HOLD_MS = 500.0  # a press held this long is a hold
PAGE_SUBMIT_MS = 1000.0  # a submit this long after the last action is the page's own (time up)
DRAG_SAMPLES = 12  # a replayed drag passes through at most this many of the person's samples
MODIFIERS = {"Shift", "Control", "Alt", "Meta", "CapsLock", "AltGraph", "Fn", "OS"}
KEYS = {
    "Enter",
    "Backspace",
    "Delete",
    "Tab",
    "Escape",
    "ArrowLeft",
    "ArrowRight",
    "ArrowUp",
    "ArrowDown",
    "Home",
    "End",
}
MouseButton = Literal["left", "middle", "right"]
BUTTON_NAMES: dict[int, MouseButton] = {0: "left", 1: "middle", 2: "right"}
VERDICT_TIMEOUT_S = 15.0
ANSWER_TOLERANCE_PX = 2.0  # the replay reached the person's answer: numbers within this (natural px)
SUBMITTED = '#status[data-state="submitted"]'
STILL = (
    "*, *::before, *::after "
    "{ transition: none !important; animation: none !important; caret-color: transparent !important; }"
)
IMAGES_LOADED = "() => Array.from(document.images).every((image) => image.complete)"
TO_PAGE = """() => {
  const stage = document.getElementById("stage"), box = stage.getBoundingClientRect();
  return [box.left, box.top, box.width / stage.offsetWidth];
}"""


# --- events -> steps -------------------------------------------------------------------------
@dataclass
class Step:
    """One published action of a person: what to do on the page and what the page logged."""

    name: str  # click, drag, hold, type_text, press_key
    t: float  # epoch ms, the page's clock: the press, or the first key
    end: float
    points: list[tuple[float, float]] = field(default_factory=list)  # stage px: press, [samples], release
    button: int = 0
    keys: list[str] = field(default_factory=list)
    acts: list[dict] = field(default_factory=list)

    @property
    def duration_ms(self) -> int:
        return max(0, round(self.end - self.t))


def attempt_steps(events: list[tuple[str, float, dict]]) -> tuple[list[Step], int]:
    """The steps of an attempt's events (kind, t, data) in stored order, and how many presses
    were left out (outside the stage)."""
    steps: list[Step] = []
    pressed: Step | None = None
    outside = 0
    for kind, t, data in events:
        if kind == "pointerdown" and pressed is None:
            x, y = float(data["x"]), float(data["y"])
            if not (0 <= x < STAGE_W and 0 <= y < STAGE_H):
                outside += 1
                continue
            pressed = Step("click", t, t, points=[(x, y)], button=int(data.get("button", 0)))
        elif kind == "pointermove" and pressed is not None:
            pressed.points.append((float(data["x"]), float(data["y"])))
            pressed.end = max(pressed.end, t)
        elif kind in ("pointerup", "pointercancel") and pressed is not None:
            pressed.points.append((float(data["x"]), float(data["y"])))
            pressed.end = max(pressed.end, t)
            steps.append(_classified(pressed))
            pressed = None
        elif kind == "keydown":
            key = str(data.get("key", ""))
            if len(key) == 1:
                last = steps[-1] if steps else None
                if last is not None and last.name == "type_text" and pressed is None:
                    last.keys.append(key)
                    last.end = t
                else:
                    steps.append(Step("type_text", t, t, keys=[key]))
            elif key in KEYS:
                steps.append(Step("press_key", t, t, keys=[key]))
        elif kind == "act.submit" and pressed is None and (not steps or t - steps[-1].end > PAGE_SUBMIT_MS):
            continue  # no hand behind it: the page submitted by itself (a study's time limit)
        elif kind.startswith("act."):
            owner = _owner(steps, pressed, t)
            if owner is not None:
                owner.acts.append({"k": kind, **data})
    if pressed is not None:  # the page stopped logging before the release (it was submitted)
        pressed.points.append(pressed.points[-1])
        steps.append(_classified(pressed))
    return steps, outside


def _owner(steps: list[Step], pressed: Step | None, t: float) -> Step | None:
    """The step a semantic action belongs to: the open press, else the last step begun by then."""
    if pressed is not None:
        return pressed
    begun = [s for s in steps if s.t <= t + 1.0]
    return begun[-1] if begun else None


def _classified(step: Step) -> Step:
    (x0, y0) = step.points[0]
    reach = max(math.hypot(x - x0, y - y0) for x, y in step.points)
    if reach > DRAG_PX:
        step.name = "drag"
    elif step.end - step.t >= HOLD_MS:
        step.name = "hold"
    return step


def _hold_logged(step: Step) -> bool:
    return any(a["k"] == "act.hold_start" for a in step.acts)


def published_action(step: Step, to_page: Callable[[float, float], tuple[int, int]]) -> tuple[str, dict, str]:
    """(name, arguments, result text) as the published client writes them, page pixels."""
    if step.name == "click" and _hold_logged(step):
        step.name = "hold"
    button = BUTTON_NAMES.get(step.button, "left")
    if step.name in ("click", "hold"):
        x, y = to_page(*step.points[0])
        if step.name == "hold":
            args: dict[str, Any] = {"x": x, "y": y, "duration_ms": step.duration_ms}
            return "hold", args, f"held mouse {button} at ({x}, {y}) for {step.duration_ms}ms"
        args = {"x": x, "y": y} if button == "left" else {"x": x, "y": y, "button": button}
        return "click", args, f"clicked ({x}, {y}) button={button}"
    if step.name == "drag":
        (sx, sy), (ex, ey) = to_page(*step.points[0]), to_page(*step.points[-1])
        args = {"start_x": sx, "start_y": sy, "end_x": ex, "end_y": ey}
        return "drag", args, f"dragged ({sx},{sy}) -> ({ex},{ey})"
    if step.name == "type_text":
        text = "".join(step.keys)
        return "type_text", {"text": text}, f'typed "{text}"'
    key = step.keys[0]
    return "press_key", {"key": key}, f'pressed key "{key}"'


# --- what is exported ------------------------------------------------------------------------
@dataclass(frozen=True)
class Selection:
    attempts: QuerySet[Attempt]
    left_out: dict[str, int]


def study_attempts(study: Study, *, with_excluded: bool = False, with_no_input: bool = False) -> Selection:
    """The study's submitted human attempts to export, and how many were left out and why."""
    base = Attempt.objects.filter(study=study, participant__kind=Participant.Kind.HUMAN, submitted_at__isnull=False)
    excluded = Enrollment.objects.filter(study=study, excluded=True).values("participant_id")
    left_out = {
        "excluded_annotators": 0 if with_excluded else base.filter(participant_id__in=excluded).count(),
        "no_input": 0 if with_no_input else base.filter(input_ok=False).exclude(participant_id__in=excluded).count(),
    }
    chosen = base
    if not with_excluded:
        chosen = chosen.exclude(participant_id__in=excluded)
    if not with_no_input:
        chosen = chosen.exclude(input_ok=False)
    return Selection(chosen.order_by("puzzle__type", "puzzle_id", "created_at", "pk"), left_out)


# --- the render ------------------------------------------------------------------------------
@dataclass
class Job:
    attempt_id: int
    out: Path
    system_prompt: str
    reasoner: Any = None  # annotation.datasets.reasoning.Reasoner, when asked


@dataclass
class Rendered:
    attempt_id: int
    entry: dict | None  # for run_summary.json
    problem: str = ""
    render_attempt: int | None = None
    seconds: float = 0.0


@dataclass
class Prepared:
    attempt: Attempt
    render: Attempt
    steps: list[Step]
    outside: int
    events: list[tuple[str, float, dict]]
    folder: str
    stem: str
    grid: list[int] | None


def _prepare(job: Job, participant: Participant, folders: dict, made: list[int]) -> Prepared:
    attempt = Attempt.objects.select_related("puzzle").get(pk=job.attempt_id)
    events = list(Event.objects.filter(attempt_id=attempt.pk).order_by("seq", "index").values_list("kind", "t", "data"))
    steps, outside = attempt_steps(events)
    puzzle = attempt.puzzle
    if puzzle.pk not in folders:
        folders[puzzle.pk] = (type_folder(puzzle), id_stem(puzzle_file_id(puzzle)))
    folder, stem = folders[puzzle.pk]
    render = attempt_start(participant=participant, puzzle=puzzle)
    made.append(render.pk)
    return Prepared(attempt, render, steps, outside, events, folder, stem, puzzle.public.get("grid_size"))


def render_participant() -> Participant:
    """The participant whose pages replay people's events (the stage alone, as an agent's)."""
    return system_participant(kind=Participant.Kind.REPLAY, label="human trajectories")


def trajectories_export(
    study: Study,
    out: Path,
    *,
    with_excluded: bool = False,
    with_no_input: bool = False,
    workers: int = 3,
    limit: int | None = None,
    system_prompt: str = TOOLS_PROMPT,
    reasoner: Reasoner | None = None,
    on_result: Callable[[Rendered], None] | None = None,
) -> dict:
    """Render and write every chosen attempt; returns what arena_export.json holds."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    selection = study_attempts(study, with_excluded=with_excluded, with_no_input=with_no_input)
    ids = export_ids(selection, limit)
    results = attempts_render(
        ids, out, system_prompt=system_prompt, workers=workers, reasoner=reasoner, on_result=on_result
    )
    return export_summary_write(
        study,
        out,
        selection,
        ids,
        failed=[{"attempt": r.attempt_id, "problem": r.problem} for r in results if not r.entry],
        seconds=time.monotonic() - started,
        workers=workers,
        reasoning=reasoner.describe() if reasoner else None,
    )


def export_ids(selection: Selection, limit: int | None = None) -> list[int]:
    """The attempts an export renders, in the order it renders them (a type at a time)."""
    ids = _interleaved(list(selection.attempts.values_list("pk", "puzzle__type")))
    return ids if limit is None else ids[:limit]


def attempts_render(
    ids: list[int],
    out: Path,
    *,
    system_prompt: str = TOOLS_PROMPT,
    workers: int = 3,
    reasoner: Reasoner | None = None,
    on_result: Callable[[Rendered], None] | None = None,
) -> list[Rendered]:
    """Render these attempts into out (each attempt's folder written whole, or not at all); the
    replay's own attempts are deleted whatever happens."""
    participant = render_participant()
    jobs = [Job(pk, out, system_prompt, reasoner) for pk in ids]
    folders: dict[int, tuple[str, str]] = {}
    made: list[int] = []
    try:
        if not jobs:
            return []
        return on_pages(
            jobs,
            user=participant.user,
            workers=workers,
            act=lambda page, job: _render_one(page, job, participant, folders, made),
            on_result=on_result,
        )
    finally:
        Attempt.objects.filter(participant=participant, pk__in=made).delete()


def export_summary_write(
    study: Study,
    out: Path,
    selection: Selection,
    ids: list[int],
    *,
    failed: list[dict],
    seconds: float,
    workers: int,
    reasoning: Any = None,
) -> dict:
    """run_summary.json and arena_export.json over the attempts written in out (read back from
    their summary.json, so a job whose chunks ran on many machines sums up the same way)."""
    attempts = Attempt.objects.select_related("puzzle").in_bulk(ids)
    order = {pk: place for place, pk in enumerate(selection.attempts.values_list("pk", flat=True))}
    entries = []
    for pk in sorted(ids, key=lambda pk: order.get(pk, len(order))):  # the study's order: by type, puzzle
        written = attempt_place(out, attempts[pk]) / "summary.json" if pk in attempts else None
        if written is not None and written.is_file():
            entries.append(_entry(written))
    write_json(out / "run_summary.json", run_summary(AGENT, entries, mode="per_puzzle", extra=("arena_attempt",)))
    record = {
        "study": {"id": study.pk, "name": study.name, "split": study.split},
        "attempts": len(ids),
        "written": len(entries),
        "failed": failed,
        "left_out": selection.left_out,
        "replay_same_answer": sum(1 for e in entries if e["arena_replay"]["same_answer"]),
        "seconds": round(seconds, 2),
        "workers": workers,
        "reasoning": reasoning,
        "rules": __doc__,
    }
    write_json(out / "arena_export.json", record)
    return record


def _entry(summary_file: Path) -> dict:
    """The run_summary.json entry of an attempt's folder, from its summary.json."""
    return _summary_entry(summary_file.parent.parent.name, json.loads(summary_file.read_text(encoding="utf-8")))


def _summary_entry(task_id: str, summary: dict) -> dict:
    """An attempt's run_summary.json entry from its summary (as summary.json holds it): the
    rollout's, with the attempt and how its replay went."""
    return summary_entry(task_id, summary) | {key: summary[key] for key in ("arena_attempt", "arena_replay")}


def attempt_place(out: Path, attempt: Attempt) -> Path:
    """Where an attempt's files go: <folder lower>/<folder>_<id stem>/attempt_<uid>. The folder
    exists only once all of them are written (see _files)."""
    return _place(out, type_folder(attempt.puzzle), id_stem(puzzle_file_id(attempt.puzzle)), attempt.uid)


def _place(out: Path, folder: str, stem: str, uid: str) -> Path:
    return out / folder.lower() / f"{folder}_{stem}" / f"attempt_{uid}"


def _interleaved(rows: list[tuple[int, str]]) -> list[int]:
    """Attempt ids taken a type at a time, round robin: slow types (a hold takes seconds) spread
    over the pages, and the first N (--limit) are a sample of every type."""
    by_type: dict[str, list[int]] = {}
    for pk, type_name in rows:
        by_type.setdefault(type_name, []).append(pk)
    queues = [by_type[name] for name in sorted(by_type)]
    longest = max((len(q) for q in queues), default=0)
    return [q[i] for i in range(longest) for q in queues if i < len(q)]


async def _render_one(page: Page, job: Job, participant: Participant, folders: dict, made: list[int]) -> Rendered:
    started = time.monotonic()
    prepared = None
    try:
        prepared = await sync_to_async(_prepare)(job, participant, folders, made)
        shots, actions, replay = await _replay(page, prepared)
        entry = await _write_attempt(job, prepared, shots, actions, replay)
        return Rendered(job.attempt_id, entry, render_attempt=prepared.render.pk, seconds=time.monotonic() - started)
    except Exception as error:  # one attempt that cannot be rendered is named, the rest go on
        problem = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]
        with contextlib.suppress(Exception):  # the next attempt loads afresh
            await page.goto("about:blank")
        render_id = prepared.render.pk if prepared else None
        return Rendered(job.attempt_id, None, problem, render_id, time.monotonic() - started)


async def _replay(page: Page, prepared: Prepared) -> tuple[list[bytes], list[tuple[str, dict, str]], dict]:
    uid = prepared.render.uid
    await open_attempt(page, uid, in_place=True)
    await page.wait_for_function(IMAGES_LOADED)
    await _still(page)
    left, top, scale = await page.evaluate(TO_PAGE)

    def to_page(x: float, y: float) -> tuple[int, int]:
        return int(left + x * scale), int(top + y * scale)

    def at(point: tuple[float, float]) -> tuple[float, float]:
        return left + point[0] * scale, top + point[1] * scale

    shots = [await _shot(page)]
    actions = []
    last_submit = _last_submit(prepared.steps)
    for number, step in enumerate(prepared.steps, start=1):
        actions.append(published_action(step, to_page))
        await _act(page, step, at)
        if number == last_submit:
            # the verdict before the screenshot; if the replay did not submit where the person
            # did, the screenshot shows where it is
            with contextlib.suppress(NotSubmitted):
                await wait_submitted(page, VERDICT_TIMEOUT_S)
        shots.append(await _shot(page))
    submitted = await page.locator(SUBMITTED).count() > 0
    if not submitted:  # the next attempt loads afresh rather than waiting for this one to drain
        await page.goto("about:blank")
    return shots, actions, await sync_to_async(_replay_outcome)(prepared, submitted)


def _last_submit(steps: list[Step]) -> int | None:
    """The number of the last step with a submit, if any."""
    return max((n for n, s in enumerate(steps, start=1) if any(a["k"] == "act.submit" for a in s.acts)), default=None)


async def _act(page: Page, step: Step, at: Callable[[tuple[float, float]], tuple[float, float]]) -> None:
    mouse, keyboard = page.mouse, page.keyboard
    button = BUTTON_NAMES.get(step.button, "left")
    if step.name in ("click", "hold", "drag"):
        await mouse.move(*at(step.points[0]))
        await mouse.down(button=button)
        if step.name == "drag":
            middle = step.points[1:-1]
            stride = max(1, math.ceil(len(middle) / DRAG_SAMPLES))
            for point in middle[stride - 1 :: stride]:
                await mouse.move(*at(point))
        elif step.name == "hold" or _hold_logged(step):
            await asyncio.sleep(step.duration_ms / 1000)
        await mouse.move(*at(step.points[-1]))
        await mouse.up(button=button)
    else:
        for key in step.keys:
            await keyboard.press(key)


async def _shot(page: Page) -> bytes:
    """The viewport as PNG, straight from Chromium (CDP, its fast PNG encoder: half the time of
    Playwright's screenshot here); the page is kept still by STILL."""
    session = _sessions.get(page)
    if session is None:
        session = _sessions[page] = await page.context.new_cdp_session(page)
    found = await session.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
    return base64.b64decode(found["data"])


async def _still(page: Page) -> None:
    """Transitions and animations off, the caret hidden: a screenshot shows where the page
    settles (as Playwright's animations="disabled" would), not a moment of a tween."""
    await page.evaluate(
        """css => {
          if (document.getElementById("arena-still")) return;
          const style = Object.assign(document.createElement("style"), {id: "arena-still", textContent: css});
          document.head.append(style);
        }""",
        STILL,
    )


_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _replay_outcome(prepared: Prepared, submitted: bool) -> dict:
    render = Attempt.objects.get(pk=prepared.render.pk)
    person = prepared.attempt
    return {
        "submitted": render.submitted_at is not None,
        "correct": render.correct,
        "same_answer": render.submitted_at is not None and answers_match(render.answer, person.answer),
        "same_verdict": render.submitted_at is not None and render.correct == person.correct,
        "page_submitted": submitted,
    }


def answers_match(a: Any, b: Any, tolerance: float = ANSWER_TOLERANCE_PX) -> bool:
    """Equal answers, numbers within the tolerance: a person's page is scaled, so their press
    lands between pixels, while the replay's lands on whole page pixels."""
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= tolerance
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(answers_match(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(answers_match(a[k], b[k], tolerance) for k in a)
    return a == b


# --- files -----------------------------------------------------------------------------------
async def _write_attempt(job: Job, prepared: Prepared, shots: list[bytes], actions: list, replay: dict) -> dict:
    reasons: list[dict] = []
    if job.reasoner is not None:
        from annotation.datasets.reasoning import step_description

        reasons = await job.reasoner.fill_steps(
            instruction=prepared.attempt.puzzle.public.get("instruction", ""),
            shots=shots,
            steps=[step_description(s, a, prepared.grid) for s, a in zip(prepared.steps, actions)],
        )
    return await asyncio.to_thread(_files, job, prepared, shots, actions, replay, reasons)


def _files(job: Job, prepared: Prepared, shots: list[bytes], actions: list, replay: dict, reasons: list) -> dict:
    """The attempt's folder written under a temporary name, then renamed into place: a worker
    killed halfway leaves no half folder under the real name, and a second render replaces the
    first whole."""
    place = _place(job.out, prepared.folder, prepared.stem, prepared.attempt.uid)  # no query: off the loop's thread
    partial = place.with_name(f".{place.name}.partial-{uuid.uuid4().hex[:8]}")
    try:
        entry = _files_into(partial, job, prepared, shots, actions, replay, reasons)
        shutil.rmtree(place, ignore_errors=True)
        partial.rename(place)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return entry


def _files_into(
    place: Path, job: Job, prepared: Prepared, shots: list[bytes], actions: list, replay: dict, reasons: list
) -> dict:
    attempt, folder, stem = prepared.attempt, prepared.folder, prepared.stem
    (place / "screenshots").mkdir(parents=True)
    for number, png in enumerate(shots):
        (place / "screenshots" / f"screenshot_step_{number}.png").write_bytes(png)
    instruction = attempt.puzzle.public.get("instruction") or None
    t0 = _t0(prepared.events)
    kept = [r["text"] if r.get("kept") else "" for r in reasons] or [""] * len(actions)
    steps = [
        {
            "screenshot_path": f"screenshots/screenshot_step_{number}.png",
            "reasoning": kept[number - 1],
            "action": action_string(name, args),
            "result": result,
            "arena_t_ms": round(step.t - t0, 3),
            "arena_duration_ms": step.duration_ms,
            "arena_acts": step.acts,
        }
        for number, ((name, args, result), step) in enumerate(zip(actions, prepared.steps), start=1)
    ]
    arena = {
        "arena_attempt": attempt.uid,
        "arena_participant": attempt.participant_id,
        "arena_puzzle": attempt.puzzle.uid,
        "arena_purpose": attempt.purpose,
        "arena_wall_ms": attempt.wall_ms,
        "arena_active_ms": attempt.active_ms,
        "arena_input_ok": attempt.input_ok,
        "arena_presses_outside_stage": prepared.outside,
        "arena_replay": replay,
    }
    summary = write_published(
        place,
        agent=AGENT,
        folder=folder,
        stem=stem,
        prompt=instruction,
        steps=steps,
        submitted=True,
        correct=bool(attempt.correct),
        status="done",
        arena=arena,
    )
    reward, task_id = summary["reward"], f"{folder}_{stem}"
    write_json(place / "sft_data.json", _sft(job.system_prompt, instruction, task_id, folder, reward, attempt, steps))
    _pointer_file(place / "arena_pointer.npz", prepared, t0)
    if reasons:
        write_json(place / "arena_reasoning.json", {"steps": reasons})
    return _summary_entry(task_id, summary)


def _t0(events: list[tuple[str, float, dict]]) -> float:
    loads = [t for kind, t, _ in events if kind == "load"]
    return loads[0] if loads else min((t for _, t, _ in events), default=0.0)


def _pointer_file(path: Path, prepared: Prepared, t0: float) -> None:
    """The continuous path (motion.pointer_path) relative to the page's load, with each sample's
    segment: how many actions had begun by then (0 before the first)."""
    found = pointer_path(prepared.events)
    starts = np.array([s.t for s in prepared.steps], dtype=np.float64)
    segment = np.searchsorted(starts, found.t, side="right").astype(np.int16)
    np.savez_compressed(
        path,
        t=found.t - t0,
        x=found.x,
        y=found.y,
        buttons=found.buttons,
        pointer=found.pointer,
        kind=found.kind,
        segment=segment,
        action_t=starts - t0,
        t0_epoch_ms=np.float64(t0),
        pointer_types=np.array(POINTER_TYPES),
        kinds=np.array(list(KIND_CODES)),
    )


def _sft(
    system: str, instruction: Any, task_id: str, folder: str, reward: float, attempt: Attempt, steps: list
) -> dict:
    """As the agent export reconstructs it: the system prompt, the first screenshot with the task,
    then per action the reply (reasoning in <think>) and the screenshot after it."""
    conversation: list[dict[str, Any]] = [{"role": "system", "content": system}, sft_user(0, first_text(instruction))]
    for number, step in enumerate(steps, start=1):
        conversation.append({"role": "assistant", "content": f"<think>{step['reasoning']}</think>\n{step['action']}"})
        conversation.append(sft_user(number, f"Action executed: {step['result']}. Here is the updated screenshot."))
    return {
        "id": task_id,
        "puzzle_type": folder,
        "puzzle_prompt": instruction,
        "reward": reward,
        "correct": bool(attempt.correct),
        "arena_attempt": attempt.uid,
        "conversations": conversation,
    }
