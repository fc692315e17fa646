"""Output folders read back as runs: the published client's real output, our exports, older shapes.

The published client writes, per rollout, `<folder lower>/<folder>_<id stem>/[rollout_<n>/]`
with a summary.json that names the puzzle: `puzzle_type` (the type folder, "Bingo_200") and
`puzzle_id` (the id's stem, "bingo13"). A rollout is matched to a stored puzzle by those two (its
type, and its source id without extension), never by folder names; metafile.json gives its turns
and screenshots/ its screenshots; our exports add arena_turns.json (every turn as stored),
arena_failed.json (a failed rollout) and arena_run.json (the run). Folders whose summaries do not
name their puzzle are read the older way (read_agent_outputs: matched on the folder or file
stem). Unreadable files and entries that match no puzzle are named, never fatal.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from django.db import models, transaction

from annotation.agents.published import type_of_folder
from annotation.agents.trajectories import forget, save_screenshot
from annotation.models import AgentRun, Rollout, Turn
from puzzles.interop_files import stem_of
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
    matched: int  # puzzles
    unmatched: list[str]  # "Bingo_200/bingo13" (or the older shapes' stems)
    problems: list[tuple[str, str]]


@dataclass
class PublishedRollout:
    """One rollout folder of the published layout."""

    folder: Path
    puzzle_type: str  # the type folder, as summary.json names it
    puzzle_id: str  # the id stem
    number: int  # 1-based, as the rollout_<n> folder names it (1 without one)
    summary: dict
    failed: bool = False

    @property
    def key(self) -> str:
        return f"{self.puzzle_type}/{self.puzzle_id}"


def read_published(root: Path) -> tuple[list[PublishedRollout], list[tuple[str, str]]]:
    """Every rollout below root whose summary.json (or arena_failed.json) names its puzzle."""
    found: dict[tuple[str, str, int], PublishedRollout] = {}
    problems: list[tuple[str, str]] = []
    for path in sorted([*root.rglob("summary.json"), *root.rglob("arena_failed.json")]):
        data, reason = _json_object(path)
        if data is None or not all(isinstance(data.get(k), str) and data[k] for k in ("puzzle_type", "puzzle_id")):
            problems.append((str(path), reason or "names no puzzle_type and puzzle_id"))
            continue
        match = ROLLOUT_DIR.fullmatch(path.parent.name)
        entry = PublishedRollout(
            path.parent,
            data["puzzle_type"],
            data["puzzle_id"],
            int(match.group(1)) if match else 1,
            data,
            failed=path.name == "arena_failed.json",
        )
        where = (entry.puzzle_type, entry.puzzle_id, entry.number)
        if where in found:
            problems.append(
                (str(path), f"rollout {entry.number} of {entry.key} was already read from {found[where].folder}")
            )
            continue
        found[where] = entry
    return list(found.values()), problems


def _json_object(path: Path) -> tuple[dict | None, str | None]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return None, f"unreadable: {error}"
    return (data, None) if isinstance(data, dict) else (None, "not a JSON object")


def agent_run_import(*, path, name: str, dataset: str | None = None) -> AgentImport:
    """Import an output folder as a run named `name` (an earlier import of that name is replaced)."""
    root = Path(path)
    if AgentRun.objects.filter(name=name).exclude(source=AgentRun.Source.IMPORT).exists():
        return AgentImport(0, 0, [], [(name, "a run of our harness has that name; choose another")])
    entries, problems = read_published(root) if root.is_dir() else ([], [])
    if entries:
        return _import_published(root, name, dataset, entries, problems)
    return _import_older(root, name, dataset)


def _import_published(root: Path, name: str, dataset: str | None, entries: list[PublishedRollout], problems):
    matches, unmatched, ambiguous = match_published(entries, dataset)
    problems = problems + ambiguous
    record = _json_object(root / "arena_run.json")[0] or {}
    with transaction.atomic():
        run = _fresh_run(
            name, root, record, model=_model_of(entries, record), puzzles=list(dict.fromkeys(matches.values()))
        )
        for entry in entries:
            if entry.key in matches:
                _store_rollout(run, entry, matches[entry.key])
    run.rollouts_per_puzzle = max((r.index + 1 for r in run.rollouts.all()), default=1)
    run.save(update_fields=["rollouts_per_puzzle"])
    return AgentImport(run.pk, len(set(matches.values())), unmatched, problems)


def match_published(
    entries: list[PublishedRollout], dataset: str | None
) -> tuple[dict[str, int], list[str], list[tuple[str, str]]]:
    """{entry key: puzzle id} by type and source id (the id without its extension), the keys
    matching no puzzle, and the keys matching several (with why)."""
    wanted: dict[str, set[str]] = defaultdict(set)
    for entry in entries:
        kind = type_of_folder(entry.puzzle_type)
        if kind:
            wanted[kind].add(entry.puzzle_id)
    by_key: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for kind, stems in wanted.items():
        candidates = Puzzle.objects.filter(type=kind)
        if dataset:
            candidates = candidates.filter(dataset=dataset)
        for pk, source_id, uid in candidates.values_list("pk", "source_id", "uid"):
            if stem_of(source_id) in stems:
                by_key[(kind, stem_of(source_id))].append((pk, uid))
    matches, unmatched, ambiguous = {}, [], []
    for entry in entries:
        found = by_key.get((type_of_folder(entry.puzzle_type) or "", entry.puzzle_id), [])
        named = [pk for pk, uid in found if uid == entry.summary.get("arena_puzzle")]
        if len(found) == 1 or len(named) == 1:
            matches[entry.key] = named[0] if named else found[0][0]
        elif found:
            ambiguous.append((entry.key, f"matches {len(found)} puzzles; name the dataset"))
        elif entry.key not in unmatched:
            unmatched.append(entry.key)
    return matches, unmatched, list(dict.fromkeys(ambiguous))


def _model_of(entries: list[PublishedRollout], record: dict) -> str:
    if record.get("model"):
        return record["model"]
    for entry in entries:
        meta = _json_object(entry.folder / "metafile.json")[0] or {}
        if isinstance(meta.get("agent"), str) and meta["agent"]:
            return meta["agent"]
    return ""


def _fresh_run(name: str, root: Path, record: dict, *, model: str, puzzles: list[int]) -> AgentRun:
    """The import's run: any earlier import of that name replaced; the run's own facts when exported by us."""
    AgentRun.objects.filter(name=name, source=AgentRun.Source.IMPORT).delete()
    datasets = sorted(set(Puzzle.objects.filter(pk__in=puzzles).values_list("dataset", "split")))
    return AgentRun.objects.create(
        name=name,
        source=AgentRun.Source.IMPORT,
        model=model,
        base_url=str(record.get("base_url") or ""),
        protocol=str(record.get("protocol") or ""),
        dataset=datasets[0][0] if len(datasets) == 1 else "",
        split=datasets[0][1] if len(datasets) == 1 else "",
        puzzles=puzzles,
        settings=record.get("settings") if isinstance(record.get("settings"), dict) else {},
        source_path=str(root),
    )


def _store_rollout(run: AgentRun, entry: PublishedRollout, puzzle_id: int) -> None:
    """A rollout with its turns and screenshots; arena_turns.json when present, else metafile.json."""
    summary = entry.summary
    stored = _json_object(entry.folder / "arena_turns.json")[0] or {}
    saved = stored.get("rollout") if isinstance(stored.get("rollout"), dict) else {}
    rollout = Rollout.objects.create(
        run=run,
        puzzle_id=puzzle_id,
        index=entry.number - 1,
        status=_status(entry, saved),
        submitted=bool(summary.get("submitted")),
        correct=bool(summary.get("submitted")) and summary.get("correct") is True,
        end=str(summary.get("status") or saved.get("end") or "")[:24],
        reason=str(summary.get("arena_reason") or saved.get("reason") or "")[:300],
        steps=_count(summary.get("total_steps", saved.get("steps"))),
        instruction=str(summary.get("prompt") or saved.get("instruction") or ""),
        system_prompt=str(saved.get("system_prompt") or _sft_system_prompt(entry.folder)),
        tokens_in=_count(saved.get("tokens_in")),
        tokens_out=_count(saved.get("tokens_out")),
    )
    forget(rollout)  # a folder left by an earlier database under the same id
    turns = stored.get("turns") if isinstance(stored.get("turns"), list) else None
    Turn.objects.bulk_create(_turns(rollout, turns) if turns is not None else _metafile_turns(rollout, entry.folder))
    for shot in sorted((entry.folder / "screenshots").glob("screenshot_step_*.png")):
        step = shot.stem.rsplit("_", 1)[-1]
        if step.isdigit():
            save_screenshot(rollout.pk, int(step), shot.read_bytes())


def _status(entry: PublishedRollout, saved: dict) -> str:
    status = entry.summary.get("arena_status") or saved.get("status")
    if entry.failed:
        return Rollout.Status.FAILED
    if status in Rollout.Status.values and status != Rollout.Status.PENDING:
        return status
    # The published client's rollout whose first reply held no call: nothing done, nothing sent.
    if not entry.summary.get("total_steps") and not entry.summary.get("submitted"):
        return Rollout.Status.NO_ACTION
    return Rollout.Status.DONE


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _sft_system_prompt(folder: Path) -> str:
    sft = _json_object(folder / "sft_data.json")[0] or {}
    conversation = sft.get("conversations") if isinstance(sft.get("conversations"), list) else []
    first = conversation[0] if conversation and isinstance(conversation[0], dict) else {}
    return first.get("content") if first.get("role") == "system" and isinstance(first.get("content"), str) else ""


TURN_KEYS = ("number", "seen", "request", "reply", "calls", "tokens_in", "tokens_out", "latency_ms", "retries", "error")


def _turns(rollout: Rollout, turns: list) -> list[Turn]:
    """Turns as our export stored them."""
    out = []
    for turn in turns:
        if isinstance(turn, dict) and isinstance(turn.get("number"), int):
            out.append(Turn(rollout=rollout, **{key: turn[key] for key in TURN_KEYS if key in turn}))
    return out


ACTION = re.compile(r"^(\w+)(?:\((.*)\))?$", re.S)


def _metafile_turns(rollout: Rollout, folder: Path) -> list[Turn]:
    """Turns from the published metafile.json: one executed call a step (its reply's text, the
    call, its result and the screenshot after it)."""
    meta = _json_object(folder / "metafile.json")[0] or {}
    steps = meta.get("steps") if isinstance(meta.get("steps"), list) else []
    turns = []
    for number, step in enumerate(s for s in steps if isinstance(s, dict)):
        name, arguments = _call_of(str(step.get("action") or ""))
        shot = re.search(r"screenshot_step_(\d+)\.png$", str(step.get("screenshot_path") or ""))
        call = {
            "name": name,
            "arguments": arguments,
            "applied": None,
            "result": str(step.get("result") or ""),
            "screenshot": int(shot.group(1)) if shot else None,
            "error": False,
        }
        turns.append(
            Turn(
                rollout=rollout,
                number=number,
                seen=number,
                reply={"content": step.get("reasoning") or ""},
                calls=[call],
            )
        )
    return turns


def _call_of(action: str) -> tuple[str, dict]:
    """("click", {"x": 1, "y": 2}) from the published action string 'click({"x": 1, "y": 2})'."""
    match = ACTION.match(action.strip())
    if not match:
        return action, {}
    try:
        arguments = json.loads(match.group(2)) if match.group(2) else {}
    except ValueError:
        arguments = {}
    return match.group(1), arguments if isinstance(arguments, dict) else {}


def _import_older(root: Path, name: str, dataset: str | None) -> AgentImport:
    """Folders whose summaries do not name their puzzle: matched on the folder or file stem (the
    puzzle's published id, or our uid); correctness only."""
    outputs = read_agent_outputs(root)
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
        run = _fresh_run(name, root, {}, model=outputs.model or "", puzzles=list(matched.values()))
        Rollout.objects.bulk_create(
            Rollout(
                run=run,
                puzzle_id=pk,
                index=index,
                status=Rollout.Status.DONE,
                correct=correct,
                submitted=correct or None,
            )
            for key, pk in matched.items()
            for index, correct in enumerate(outputs.rollouts[key])
        )
        run.rollouts_per_puzzle = max((len(outputs.rollouts[key]) for key in matched), default=1)
        run.save(update_fields=["rollouts_per_puzzle"])
    return AgentImport(run.pk, len(matched), sorted(set(ids) - set(by_id)), problems)
