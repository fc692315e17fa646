"""Runs of the published agent, read from its output folders and stored beside ours.

The published client writes a summary.json per puzzle (in rollout_<n>/ folders, or flat
<id>.json files); each is matched to a puzzle on the file stem. Unreadable files and unknown
ids are named and skipped, never fatal.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.db import models, transaction

from annotation.models import AgentOutcome, AgentRun
from puzzles.models import Puzzle

OUTCOME_KEYS = ("correct", "success", "is_correct", "passed")  # booleans
SCORE_KEYS = ("reward", "score")  # numbers: correct when >= 1.0
TYPE_KEYS = ("type", "puzzle_type", "captcha_type")
ROLLOUT_DIR = re.compile(r"rollout_(\d+)")


@dataclass
class AgentOutputs:
    rollouts: dict[str, list[bool]]  # puzzle id -> correctness, in rollout order
    types: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def read_agent_outputs(root: Path) -> AgentOutputs:
    """Every rollout under root: <puzzle>/[rollout_<n>/]summary.json, or <puzzle>.json, at any depth.

    A JSON file other than summary.json that lies in a puzzle's folder (one holding a summary.json
    itself or in its rollout_<n> folders) is another artifact of that run and is skipped. Files
    that cannot be read, and a second file for the same puzzle and rollout, become problems.
    """
    root = Path(root)
    if not root.is_dir():
        return AgentOutputs({}, problems=[(str(root), "not a folder")])
    found: dict[tuple[str, int], tuple[bool, Path]] = {}
    types: dict[str, str] = {}
    models: set[str] = set()
    problems: list[tuple[str, str]] = []
    for path in _candidates(root):
        where = _puzzle_and_rollout(path, root)
        summary, reason = _read_summary(path) if where else (None, "no puzzle folder above it")
        if not reason and where in found:
            reason = f"rollout {where[1]} of {where[0]} was already read from {found[where][1]}"
        if reason:
            problems.append((str(path), reason))
            continue
        found[where] = (summary["correct"], path)
        if summary["type"]:
            types.setdefault(where[0], summary["type"])
        if summary["model"]:
            models.add(summary["model"])
    if len(models) > 1:
        problems.append((str(root), f"several models: {', '.join(sorted(models))}"))
    rollouts: dict[str, list[bool]] = {}
    for (puzzle, _), (correct, _) in sorted(found.items()):
        rollouts.setdefault(puzzle, []).append(correct)
    return AgentOutputs(rollouts, types, models.pop() if len(models) == 1 else None, problems)


def _candidates(root: Path) -> list[Path]:
    """The JSON files below root that may be summaries, in path order."""
    return [
        p
        for p in sorted(root.rglob("*.json"))
        if p.is_file() and (p.name == "summary.json" or not _in_puzzle_folder(p))
    ]


def _in_puzzle_folder(path: Path) -> bool:
    """Whether a non-summary JSON file sits in a puzzle's folder or in one of its rollout folders."""
    folder = path.parent
    return (folder / "summary.json").is_file() or any(
        ROLLOUT_DIR.fullmatch(p.parent.name) for p in folder.glob("rollout_*/summary.json")
    )


def _puzzle_and_rollout(path: Path, root: Path) -> tuple[str, int] | None:
    """(puzzle id, rollout number) from a file's place below root; None when it names no puzzle."""
    parts = path.relative_to(root).parts[:-1]
    rollout = 0
    if parts and (match := ROLLOUT_DIR.fullmatch(parts[-1])):
        rollout, parts = int(match.group(1)), parts[:-1]
    if path.name != "summary.json":
        return path.stem, rollout
    return (parts[-1], rollout) if parts else None


def _read_summary(path: Path) -> tuple[dict | None, str | None]:
    """({correct, type, model}, None) from a summary file, or (None, why it cannot be used)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return None, f"unreadable: {error}"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    correct, reason = _outcome(data)
    if reason:
        return None, reason
    kind = next((data[k] for k in TYPE_KEYS if isinstance(data.get(k), str) and data[k]), None)
    model = data["model"] if isinstance(data.get("model"), str) and data["model"] else None
    return {"correct": correct, "type": kind, "model": model}, None


def _outcome(data: dict) -> tuple[bool | None, str | None]:
    """Correctness from the first outcome key present (null counts as absent), or why there is none."""
    for key in OUTCOME_KEYS + SCORE_KEYS:
        value = data.get(key)
        if value is None:
            continue
        if key in OUTCOME_KEYS:
            return (value, None) if isinstance(value, bool) else (None, f"{key} is not true or false")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None, f"{key} is not a number"
        return value >= 1.0, None
    return None, f"no outcome ({', '.join(OUTCOME_KEYS + SCORE_KEYS)})"


@dataclass(frozen=True)
class AgentImport:
    run_id: int
    matched: int
    unmatched: list[str]
    problems: list[tuple[str, str]]


def agent_run_import(*, path, name: str, dataset: str | None = None) -> AgentImport:
    """Import a published agent's output folder; puzzles are matched on the file stem (the
    puzzle's published id, or our uid). Unreadable files and unknown ids are reported, not fatal."""
    outputs = read_agent_outputs(path)
    ids = list(outputs.rollouts)
    candidates = Puzzle.objects.filter(models.Q(source_id__in=ids) | models.Q(uid__in=ids))
    if dataset:
        candidates = candidates.filter(dataset=dataset)
    by_id: dict[str, list[int]] = {}
    for pk, source_id, uid in candidates.values_list("pk", "source_id", "uid"):
        for key in {source_id, uid} & set(ids):
            by_id.setdefault(key, []).append(pk)
    problems = list(outputs.problems)
    problems += [(key, f"matches {len(pks)} puzzles; name the dataset") for key, pks in by_id.items() if len(pks) > 1]
    matched = {key: pks[0] for key, pks in by_id.items() if len(pks) == 1}
    with transaction.atomic():
        run, _ = AgentRun.objects.update_or_create(
            name=name, defaults={"model": outputs.model or "", "source_path": str(path)}
        )
        run.outcomes.all().delete()
        AgentOutcome.objects.bulk_create(
            AgentOutcome(run=run, puzzle_id=pk, rollouts=outputs.rollouts[key]) for key, pk in matched.items()
        )
    return AgentImport(run.pk, len(matched), sorted(set(ids) - set(by_id)), problems)
