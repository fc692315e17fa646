"""`agent export RUN OUT`: a run in the published client's output layout (docs/agents.md).

    OUT/run_summary.json                  every rollout that did not fail, as published
    OUT/arena_run.json                    the run itself (model, server, protocol, settings, tokens...)
    OUT/<folder lower>/run_summary.json   the same for one type
    OUT/<folder lower>/<folder>_<id stem>/[rollout_<n>/]
        summary.json, metafile.json, sft_data.json, summary.md, trajectory.jsonl,
        screenshots/screenshot_step_<n>.png
        arena_turns.json                  every turn as stored (request, reply, calls, tokens)

<folder> is the published type folder (Bingo_200), <id stem> the puzzle's published id without
its extension; rollout_<n> (1-based) only when the run has k > 1. A failed rollout has no
summary.json, metafile.json or sft_data.json, as published (readers of that layout leave it out),
and an arena_failed.json with its reason instead. The files the published client writes carry
its fields; ours add only keys starting with "arena_".

Every path written is checked to resolve inside OUT and no file is written through a symbolic
link (puzzles/contained.py: an OUT holding links, say a folder imported before, cannot send a
file elsewhere); the puzzle's id must be one file name. A rollout that cannot be written so, or
whose stored turns are not in the harness's shapes, is named and left out.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.agents.episode import MAX_STEPS
from annotation.agents.protocols.base import first_text
from annotation.agents.published import DEFAULT_PAGE, id_stem, page_url, puzzle_file_id, type_folder
from annotation.agents.published_files import (
    Page,
    ended_by_submission,
    feedback_text,
    summary_md,
    trajectory_events,
    trajectory_jsonl,
    verdict_turn_text,
)
from annotation.agents.runs import run_tokens
from annotation.agents.trajectories import readable, screenshot_path, screenshot_steps, stored_turns
from annotation.models import AgentRun, Rollout, Turn
from puzzles.contained import Refused, output_path, safe_name

BENCHMARK = "captchaarena"
Reading = tuple[dict[str, Any], list[dict[str, Any]]]  # a turn's reply and calls (trajectories.readable)


@dataclass(frozen=True)
class Exported:
    written: int  # rollouts
    problems: list[tuple[str, str]] = field(default_factory=list)  # (rollout or file, why left out)


def run_export(run: AgentRun, out: Path) -> Exported:
    """Write the run under out: how many rollouts were written, and those left out with why."""
    out.mkdir(parents=True, exist_ok=True)
    names: dict[int, tuple[str, str, str]] = {}
    entries: list[dict[str, Any]] = []
    problems: list[tuple[str, str]] = []
    written = 0
    order = {puzzle: place for place, puzzle in enumerate(run.puzzles)}
    rollouts = sorted(
        run.rollouts.exclude(status=Rollout.Status.PENDING).select_related("puzzle"),
        key=lambda r: (order.get(r.puzzle_id, len(order)), r.puzzle_id, r.index),
    )
    for rollout in rollouts:
        if rollout.puzzle_id not in names:
            file_id = puzzle_file_id(rollout.puzzle)
            names[rollout.puzzle_id] = (type_folder(rollout.puzzle), file_id, id_stem(file_id))
        folder, file_id, stem = names[rollout.puzzle_id]
        parts = [folder.lower(), f"{folder}_{stem}"]
        if run.rollouts_per_puzzle > 1:
            parts.append(f"rollout_{rollout.index + 1}")
        try:
            summary = _write_rollout(run, rollout, out, parts, folder, file_id)
        except Refused as error:
            problems.append((f"rollout {rollout.pk} ({'/'.join(parts)[:200]!r})", str(error)))
            continue
        written += 1
        if summary is not None:
            entries.append(summary)
    try:
        _write_summaries(run, out, entries)
        write_json(output_path(out, "arena_run.json"), _run_record(run))
    except Refused as error:
        problems.append((str(out), str(error)))
    return Exported(written, problems)


def _write_rollout(
    run: AgentRun, rollout: Rollout, out: Path, parts: list[str], folder: str, file_id: str
) -> dict | None:
    """One rollout's files in out/parts; returns its run_summary entry (None for a failed rollout).
    Refused, before anything is written, when its id is no file name or a stored turn is unreadable."""
    stem = safe_name(id_stem(file_id), what="puzzle id")
    turns = stored_turns(rollout.pk)
    readings = [_reading(turn) for turn in turns]
    place = output_path(out, *parts)
    place.mkdir(parents=True, exist_ok=True)
    output_path(out, *parts, "screenshots").mkdir(exist_ok=True)
    for step in screenshot_steps(rollout.pk):
        target = output_path(out, *parts, "screenshots", f"screenshot_step_{step}.png")
        shutil.copyfile(screenshot_path(rollout.pk, step), target)
    write_json(
        place / "arena_turns.json", {"rollout": _rollout_record(rollout), "turns": [_turn_record(t) for t in turns]}
    )
    if rollout.status == Rollout.Status.FAILED:
        write_json(place / "arena_failed.json", {"puzzle_type": folder, "puzzle_id": stem, **_arena(rollout)})
        return None
    steps = metafile_steps(readings)
    summary = write_published(
        place,
        agent=run.model.split("/")[-1],
        folder=folder,
        stem=stem,
        prompt=rollout.instruction or None,
        steps=steps,
        submitted=bool(rollout.submitted),
        correct=bool(rollout.correct),
        status=rollout.end or "submit_not_clicked",
        arena=_arena(rollout),
    )
    task_id = f"{folder}_{stem}"
    write_json(place / "sft_data.json", _sft_data(rollout, readings, task_id, folder, summary["reward"]))
    write_text(
        place / "summary.md",
        summary_md(
            folder=folder,
            stem=stem,
            prompt=summary["prompt"],
            submitted=summary["submitted"],
            correct=summary["correct"],
            steps=steps,
            status=summary["status"],
        ),
    )
    page = Page(
        url=page_url(run.settings.get("prompt", {}).get("page") or DEFAULT_PAGE, folder, file_id),
        folder=folder,
        file_id=file_id,
        stem=stem,
        puzzle_type=rollout.puzzle.type,
        prompt=summary["prompt"],
        correct=bool(rollout.correct),
    )
    events = trajectory_events(
        rollout, turns, readings, page=page, model=run.model, max_steps=run.settings.get("max_steps", MAX_STEPS)
    )
    write_text(place / "trajectory.jsonl", trajectory_jsonl(events))
    return summary_entry(task_id, summary)


def write_published(
    place: Path,
    *,
    agent: str,
    folder: str,
    stem: str,
    prompt: str | None,
    steps: list[dict],
    submitted: bool,
    correct: bool,
    status: str,
    arena: dict,
) -> dict:
    """One rollout's metafile.json and summary.json as the published client writes them (ours add
    only the arena_ keys); returns the summary. Also the human trajectories' (datasets/)."""
    reward = 1.0 if submitted and correct else 0.0
    write_json(
        place / "metafile.json",
        {
            "benchmark": BENCHMARK,
            "agent": agent,
            "task_id": f"{folder}_{stem}",
            "summary_info": {"cum_reward": reward},
            "goal": prompt,
            "steps": steps,
        },
    )
    summary = {
        "puzzle_type": folder,
        "puzzle_id": stem,
        "prompt": prompt,
        "submitted": submitted,
        "correct": correct,
        "reward": reward,
        "status": status,
        "total_steps": len(steps),
        "transitions": [transition(i, step) for i, step in enumerate(steps)],
        **arena,
    }
    write_json(place / "summary.json", summary)
    return summary


def action_string(name: str, arguments: dict) -> str:
    """The published form of a call: name({"x": 1, ...}) (ASCII JSON), or the bare name."""
    return f"{name}({json.dumps(arguments)})" if arguments else name


def _reading(turn: Turn) -> Reading:
    reading = readable(turn)
    if reading is None:
        raise Refused(f"turn {turn.number} is unreadable (not in the shapes the harness stores)")
    return reading


def metafile_steps(readings: list[Reading]) -> list[dict[str, Any]]:
    """One step per executed call (calls answered as errors are not steps, as published)."""
    steps = []
    for reply, calls in readings:
        reasoning = reply["content"] or ""
        for call in calls:
            if call.get("error"):
                continue
            shot = call.get("screenshot")
            steps.append(
                {
                    "screenshot_path": f"screenshots/screenshot_step_{shot}.png" if shot is not None else None,
                    "reasoning": reasoning,
                    "action": action_string(call["name"], call.get("arguments") or {}),
                    "result": call.get("result", ""),
                }
            )
    return steps


def transition(number: int, step: dict) -> dict:
    """A step as summary.json lists it."""
    entry: dict[str, Any] = {"step": number, "action": step["action"]}
    if step["screenshot_path"]:
        entry["image"] = step["screenshot_path"]
    for key in ("reasoning", "result"):
        if step[key]:
            entry[key] = step[key]
    return entry


def _sft_data(rollout: Rollout, readings: list[Reading], task_id: str, folder: str, reward: float) -> dict:
    """The published SFT reconstruction: image before text, periods, <think> around the reply."""
    conversation: list[dict[str, Any]] = [
        {"role": "system", "content": rollout.system_prompt},
        sft_user(0, first_text(rollout.instruction)),
    ]
    for reply, calls in readings:
        reasoning = reply["content"] or ""
        executed = [c for c in calls if not c.get("error")]
        if not executed:
            conversation.append({"role": "assistant", "content": f"<think>{reasoning}</think>" if reasoning else ""})
        for call in executed:
            action = action_string(call["name"], call.get("arguments") or {})
            conversation.append({"role": "assistant", "content": f"<think>{reasoning}</think>\n{action}"})
            if call.get("screenshot") is not None:
                conversation.append(sft_user(call["screenshot"], _sft_text(call)))
    executed = [call for _, calls in readings for call in calls if not call.get("error")]
    if ended_by_submission(rollout) and executed and executed[-1].get("screenshot") is not None:
        # At submit detection the client's last user turn carries the page's verdict instead.
        verdict = feedback_text(rollout.puzzle.type, bool(rollout.correct))
        conversation[-1] = sft_user(executed[-1]["screenshot"], verdict_turn_text(executed[-1]["result"], verdict))
    return {
        "id": task_id,
        "puzzle_type": folder,
        "puzzle_prompt": rollout.instruction or None,
        "reward": reward,
        "correct": bool(rollout.correct),
        "conversations": conversation,
    }


def _sft_text(call: dict) -> str:
    if call["name"] == "screenshot":
        return "Here is the updated screenshot."
    return f"Action executed: {call.get('result', '')}. Here is the updated screenshot."


def sft_user(step: int, text: str) -> dict:
    return {
        "role": "user",
        "content": [
            {"type": "image", "image": f"screenshots/screenshot_step_{step}.png"},
            {"type": "text", "text": text},
        ],
    }


def _write_summaries(run: AgentRun, out: Path, entries: list[dict]) -> None:
    agent = run.model.split("/")[-1]
    write_json(output_path(out, "run_summary.json"), run_summary(agent, entries, mode="per_puzzle"))
    by_type: dict[str, list[dict]] = defaultdict(list)
    for entry in entries:
        by_type[entry["puzzle_type"]].append(entry)
    for folder, rows in by_type.items():
        summary = run_summary(agent, rows, mode="per_puzzle", puzzle_type=folder)
        write_json(output_path(out, folder.lower(), "run_summary.json"), summary)


SUMMARY_KEYS = ("task_id", "puzzle_type", "submitted", "correct", "reward", "status")


def summary_entry(task_id: str, summary: dict) -> dict:
    """A rollout's run_summary entry (SUMMARY_KEYS) from its summary (as summary.json holds it)."""
    return {"task_id": task_id} | {key: summary[key] for key in SUMMARY_KEYS if key != "task_id"}


def run_summary(
    agent: str,
    entries: list[dict],
    mode: str | None = None,
    extra: tuple[str, ...] = (),
    puzzle_type: str | None = None,
) -> dict:
    """run_summary.json over the entries, each listed with SUMMARY_KEYS and the extra keys (a type's
    names its puzzle_type after the mode, as published)."""
    submitted = sum(e["submitted"] for e in entries)
    correct = sum(e["correct"] for e in entries)
    summary: dict[str, Any] = {"benchmark": BENCHMARK, "agent": agent}
    if mode:
        summary["mode"] = mode
    if puzzle_type:
        summary["puzzle_type"] = puzzle_type
    return summary | {
        "total_puzzles": len(entries),
        "total_submitted": submitted,
        "total_correct": correct,
        "accuracy": round(100 * correct / len(entries), 2) if entries else 0.0,
        "puzzles": [{k: e[k] for k in (*SUMMARY_KEYS, *extra)} for e in entries],
    }


def _arena(rollout: Rollout) -> dict:
    return {
        "arena_rollout": rollout.index,
        "arena_status": rollout.status,
        "arena_reason": rollout.reason,
        "arena_puzzle": rollout.puzzle.uid,
    }


def _run_record(run: AgentRun) -> dict:
    return {
        "name": run.name,
        "source": run.source,
        "model": run.model,
        "base_url": run.base_url,
        "protocol": run.protocol,
        "dataset": run.dataset,
        "split": run.split,
        "rollouts_per_puzzle": run.rollouts_per_puzzle,
        "settings": run.settings,
        **run_tokens(run),
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


ROLLOUT_FIELDS = ("index", "status", "submitted", "correct", "end", "reason", "steps", "instruction", "system_prompt")
TURN_FIELDS = (
    "number",
    "seen",
    "request",
    "reply",
    "calls",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "retries",
    "error",
)


def _rollout_record(rollout: Rollout) -> dict:
    record = {field: getattr(rollout, field) for field in ROLLOUT_FIELDS}
    record.update(tokens_in=rollout.tokens_in, tokens_out=rollout.tokens_out)
    for moment in ("started_at", "finished_at"):
        value = getattr(rollout, moment)
        record[moment] = value.isoformat() if value else None
    return record


def _turn_record(turn: Turn) -> dict:
    return {field: getattr(turn, field) for field in TURN_FIELDS}


def write_json(path: Path, data: Any) -> None:
    """data as indented UTF-8 JSON at path; a symbolic link there is refused, never written through."""
    write_text(path, json.dumps(data, ensure_ascii=False, indent=2))


def write_text(path: Path, text: str) -> None:
    """text as UTF-8 at path; a symbolic link there is refused, never written through."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Refused(f"{path.name} is a symbolic link, not written through") from None
        raise
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
