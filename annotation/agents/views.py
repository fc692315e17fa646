"""The staff's pages on agent runs: the runs, one run's rollouts, and a rollout replayed step by step
(the screenshot the model saw with its action marked, its reasoning, the call and its result).
Screenshots show solved pages: served to staff only, from PRIVATE_ROOT."""

from __future__ import annotations

import json
from typing import Any

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.agents.runs import run_tokens
from annotation.agents.trajectories import readable, screenshot_path, screenshot_steps, stored_turns
from annotation.models import AgentRun, Rollout, Turn
from arena_site.staff import staff_required
from puzzles.layout import STAGE_H, STAGE_W

VIEWBOX = (STAGE_W, STAGE_H)  # a screenshot is the stage at its own size


@staff_required
def runs(request: HttpRequest) -> HttpResponse:
    rows = [{"run": run, "counts": run.counts()} for run in AgentRun.objects.order_by("-created_at", "-pk")]
    return render(request, "agents/runs.html", {"rows": rows})


@staff_required
def run(request: HttpRequest, run_id: int) -> HttpResponse:
    agent_run = get_object_or_404(AgentRun, pk=run_id)
    rollouts = agent_run.rollouts.select_related("puzzle").order_by("puzzle__type", "puzzle_id", "index")
    context = {
        "run": agent_run,
        "counts": agent_run.counts(),
        "tokens": run_tokens(agent_run),
        "rollouts": rollouts,
        "settings": json.dumps(agent_run.settings, indent=2, ensure_ascii=False),
    }
    return render(request, "agents/run.html", context)


@staff_required
def rollout(request: HttpRequest, rollout_id: int) -> HttpResponse:
    found = get_object_or_404(Rollout.objects.select_related("run", "puzzle", "attempt"), pk=rollout_id)
    steps = [_step(turn) for turn in stored_turns(found.pk)]
    shots = screenshot_steps(found.pk)
    context = {"rollout": found, "steps": steps, "final": shots[-1] if shots else None, "viewbox": VIEWBOX}
    return render(request, "agents/rollout.html", context)


@staff_required
def screenshot(request: HttpRequest, rollout_id: int, step: int) -> FileResponse:
    """A rollout's screenshot (it may show a solved page): staff only, never a public file."""
    path = screenshot_path(rollout_id, step)
    if not path.is_file():
        raise Http404("no such screenshot")
    return FileResponse(path.open("rb"), content_type="image/png")


def _step(turn: Turn) -> dict[str, Any]:
    """A turn as the page shows it; a stored turn not in the harness's shapes is one unreadable step."""
    reading = readable(turn)
    if reading is None:
        return {"turn": turn, "unreadable": True}
    reply, calls = reading
    return {
        "turn": turn,
        "reasoning": reply["content"] or "",
        "separate_reasoning": reply["reasoning_content"] or reply["reasoning"] or "",
        "finish_reason": reply["finish_reason"],
        "calls": [
            {**call, "marker": marker(call), "shown": json.dumps(call["arguments"], ensure_ascii=False)}
            for call in calls
        ],
    }


def marker(call: dict[str, Any]) -> dict[str, Any] | None:
    """Where a call acted on the stage, for the SVG over the screenshot; None when nowhere."""
    args = call.get("applied") or call.get("arguments") or {}
    name = call.get("name")
    point = _point(args, "x", "y")
    if name == "drag":
        start, end = _point(args, "start_x", "start_y"), _point(args, "end_x", "end_y")
        if start and end:
            return {"kind": "drag", "x1": start[0], "y1": start[1], "x2": end[0], "y2": end[1]}
        return None
    if point is None:
        return None
    label = f"hold {args.get('duration_ms', 10000)} ms" if name == "hold" else ""
    return {"kind": "point", "x": point[0], "y": point[1], "label": label, "error": bool(call.get("error"))}


def _point(args: dict[str, Any], x_key: str, y_key: str) -> tuple[float, float] | None:
    # Whatever JSON the call held: float() below decides what is a coordinate.
    x: Any = args.get(x_key)
    y: Any = args.get(y_key)
    if isinstance(x, (list, tuple)) and x:
        x, y = x[0], (x[1] if y is None and len(x) > 1 else y)
    try:
        return float(x), float(y)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer past a float's range
        return None
