"""Output folders read back as runs: the published client's real output, our exports, older shapes.

The published client writes, per rollout, `<folder lower>/<folder>_<id stem>/[rollout_<n>/]`
with a summary.json that names the puzzle: `puzzle_type` (the type folder, "Bingo_200") and
`puzzle_id` (the id's stem, "bingo13"). A rollout is matched to a stored puzzle by those two (its
type, and its source id without extension), never by folder names; metafile.json gives its turns
and screenshots/ its screenshots; our exports add arena_turns.json (every turn as stored),
arena_failed.json (a failed rollout) and arena_run.json (the run). Folders whose summaries do not
name their puzzle are read the older way (read_agent_outputs: matched on the folder or file
stem). Unreadable files and entries that match no puzzle are named, never fatal.

The folder is untrusted (puzzles/contained.py): files are read only as regular files below it,
no symbolic link is followed (a link met is named), JSON and screenshots have size caps, a
screenshot must be a PNG within the pixel cap, and ids must be names. A rollout whose
files are refused, or whose fields do not fit the database (an over-long field, a wrong type, a
number out of range), is named and skipped, nothing of it kept; the others are imported.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import DatabaseError, models, transaction

from annotation.agents.published import type_of_folder
from annotation.agents.trajectories import forget, save_screenshot
from annotation.models import AgentRun, Rollout, Turn
from puzzles.contained import (
    JSON_MAX_DEPTH,
    Refused,
    name_problem,
    nesting,
    read_image,
    read_json,
    regular_folder,
    safe_name,
    storable,
    storable_text,
)
from puzzles.interop_files import stem_of
from puzzles.models import Puzzle

OUTCOME_KEYS = ("correct", "success", "is_correct", "passed")  # booleans
SCORE_KEYS = ("reward", "score")  # numbers: correct when >= 1.0
TYPE_KEYS = ("type", "puzzle_type", "captcha_type")
ROLLOUT_DIR = re.compile(r"rollout_(\d+)")
SCREENSHOT = re.compile(r"screenshot_step_(\d+)\.png")
MAX_ROLLOUT = 32768  # rollout_<n> is stored as index n - 1 in a small integer
MAX_STEP = 32767  # a screenshot's step, as Turn.seen keeps it


def _column_length(name: str) -> int:
    """The length limit of one of AgentRun's text columns (each one filled here has one)."""
    column = AgentRun._meta.get_field(name)
    assert isinstance(column, models.CharField) and column.max_length is not None
    return column.max_length


NAME_MAX = _column_length("name")


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
    candidates, problems = _candidates(root)
    for path in candidates:
        where = _puzzle_and_rollout(path, root)
        summary, reason = _read_summary(root, path) if where else (None, "no puzzle folder above it")
        reason = reason or name_problem(where[0] if where else "", what="puzzle id")
        if not reason and where in found:
            reason = f"rollout {where[1]} of {where[0]} was already read from {found[where][1]}"
        if reason:
            problems.append((str(path), reason))
            continue
        assert where is not None and summary is not None  # no reason: both were read
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


def _candidates(root: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """The JSON files below root that may be summaries, in path order, and the links not followed."""
    files, problems = files_below(root, wanted=lambda name: name.endswith(".json"))
    summaries = {p for p in files if p.name == "summary.json"}
    # A puzzle's folder holds its summary, or rollout folders that hold theirs.
    puzzle_folders = {p.parent for p in summaries} | {
        p.parent.parent for p in summaries if ROLLOUT_DIR.fullmatch(p.parent.name)
    }
    return [p for p in files if p in summaries or p.parent not in puzzle_folders], problems


def files_below(root: Path, *, wanted: Callable[[str], bool]) -> tuple[list[Path], list[tuple[str, str]]]:
    """The regular files below root whose name is wanted, sorted, and (path, why) for each symbolic
    link met that is a folder or a wanted name: named, never followed (the folder is untrusted)."""
    files: list[Path] = []
    problems: list[tuple[str, str]] = []
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            entries = [(path, path.lstat().st_mode) for path in folder.iterdir()]
        except OSError as error:
            problems.append((str(folder), f"unreadable: {error.strerror or error}"))
            continue
        for path, mode in entries:
            if stat.S_ISLNK(mode) and (wanted(path.name) or path.is_dir()):
                problems.append((str(path), "a symbolic link, not followed"))
            elif stat.S_ISDIR(mode):
                folders.append(path)
            elif stat.S_ISREG(mode) and wanted(path.name):
                files.append(path)
    return sorted(files), sorted(problems)


def _puzzle_and_rollout(path: Path, root: Path) -> tuple[str, int] | None:
    """(puzzle id, rollout number) from a file's place below root; None when it names no puzzle."""
    parts = path.relative_to(root).parts[:-1]
    rollout = 0
    if parts and (match := ROLLOUT_DIR.fullmatch(parts[-1])):
        rollout, parts = int(match.group(1)), parts[:-1]
    if path.name != "summary.json":
        return path.stem, rollout
    return (parts[-1], rollout) if parts else None


def _read_summary(root: Path, path: Path) -> tuple[dict | None, str | None]:
    """({correct, type, model}, None) from a summary file, or (None, why it cannot be used)."""
    data, reason = _json_object(root, path)
    if data is None:
        return None, reason
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
    paths, problems = files_below(root, wanted=lambda name: name in ("summary.json", "arena_failed.json"))
    for path in paths:
        data, reason = _json_object(root, path)
        entry, reason = _published_entry(path, data) if data is not None else (None, reason)
        if entry is None:
            problems.append((str(path), reason or "not a rollout"))
            continue
        where = (entry.puzzle_type, entry.puzzle_id, entry.number)
        if where in found:
            problems.append(
                (str(path), f"rollout {entry.number} of {entry.key} was already read from {found[where].folder}")
            )
            continue
        found[where] = entry
    return list(found.values()), problems


def _published_entry(path: Path, data: dict) -> tuple[PublishedRollout | None, str | None]:
    """The rollout a summary.json (or arena_failed.json) describes, or why it names none."""
    if not all(isinstance(data.get(k), str) and data[k] for k in ("puzzle_type", "puzzle_id")):
        return None, "names no puzzle_type and puzzle_id"
    try:
        kind, stem = safe_name(data["puzzle_type"], what="puzzle_type"), safe_name(data["puzzle_id"], what="puzzle_id")
    except Refused as error:
        return None, str(error)
    match = ROLLOUT_DIR.fullmatch(path.parent.name)
    number = int(match.group(1)) if match else 1
    if not 1 <= number <= MAX_ROLLOUT:
        return None, f"rollout_{number} is out of range (1 to {MAX_ROLLOUT})"
    return PublishedRollout(path.parent, kind, stem, number, data, failed=path.name == "arena_failed.json"), None


def _json_object(root: Path, path: Path) -> tuple[dict | None, str | None]:
    """A JSON object read within root (puzzles/contained.py's rules), or (None, why not)."""
    try:
        data = read_json(root, path)
    except Refused as error:
        return None, f"unreadable: {error}"
    return (data, None) if isinstance(data, dict) else (None, "not a JSON object")


def _optional_object(root: Path, path: Path) -> dict:
    """A rollout's optional JSON file: {} when absent or not an object; Refused when it may not be read."""
    if not os.path.lexists(path):
        return {}
    data = read_json(root, path)
    return data if isinstance(data, dict) else {}


def agent_run_import(*, path: str | Path, name: str, dataset: str | None = None) -> AgentImport:
    """Import an output folder as a run named `name` (an earlier import of that name is replaced)."""
    root = Path(path)
    if len(name) > NAME_MAX:
        return AgentImport(0, 0, [], [(name[:60], f"a run's name is at most {NAME_MAX} characters")])
    if AgentRun.objects.filter(name=name).exclude(source=AgentRun.Source.IMPORT).exists():
        return AgentImport(0, 0, [], [(name, "a run of our harness has that name; choose another")])
    entries, problems = read_published(root) if root.is_dir() else ([], [])
    if entries:
        return _import_published(root, name, dataset, entries, problems)
    return _import_older(root, name, dataset)


def _import_published(
    root: Path, name: str, dataset: str | None, entries: list[PublishedRollout], problems: list[tuple[str, str]]
) -> AgentImport:
    matches, unmatched, ambiguous = match_published(entries, dataset)
    problems = problems + ambiguous
    record = _run_record(root, problems)
    with transaction.atomic():
        run = _fresh_run(
            name,
            root,
            record,
            model=_model_of(root, entries, record),
            puzzles=list(dict.fromkeys(matches.values())),
            problems=problems,
        )
        for entry in entries:
            why = _stored_or_why(root, run, entry, matches[entry.key]) if entry.key in matches else None
            if why:
                problems.append((str(entry.folder), why))
    run.rollouts_per_puzzle = max((r.index + 1 for r in run.rollouts.all()), default=1)
    run.save(update_fields=["rollouts_per_puzzle"])
    return AgentImport(run.pk, len(set(matches.values())), unmatched, problems)


def _run_record(root: Path, problems: list[tuple[str, str]]) -> dict:
    """arena_run.json, our export's record of the run: {} when absent, named when refused."""
    try:
        return _optional_object(root, root / "arena_run.json")
    except Refused as error:
        problems.append((str(root / "arena_run.json"), f"unreadable: {error}"))
        return {}


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


def _model_of(root: Path, entries: list[PublishedRollout], record: dict) -> Any:
    if record.get("model"):
        return record["model"]
    for entry in entries:
        meta = _json_object(root, entry.folder / "metafile.json")[0] or {}
        if isinstance(meta.get("agent"), str) and meta["agent"]:
            return meta["agent"]
    return ""


def _fresh_run(
    name: str, root: Path, record: dict, *, model: Any, puzzles: list[int], problems: list[tuple[str, str]]
) -> AgentRun:
    """The import's run: any earlier import of that name replaced; the run's own facts when exported by
    us, each left empty (and named) when it does not fit its column."""
    AgentRun.objects.filter(name=name, source=AgentRun.Source.IMPORT).delete()
    datasets = sorted(set(Puzzle.objects.filter(pk__in=puzzles).values_list("dataset", "split")))
    texts = {"model": model, "base_url": record.get("base_url"), "protocol": record.get("protocol")}
    return AgentRun.objects.create(
        name=name,
        source=AgentRun.Source.IMPORT,
        **{key: _run_text(key, value, problems) for key, value in texts.items()},
        dataset=datasets[0][0] if len(datasets) == 1 else "",
        split=datasets[0][1] if len(datasets) == 1 else "",
        puzzles=puzzles,
        settings=_run_settings(record.get("settings"), problems),
        source_path=str(root)[: AgentRun._meta.get_field("source_path").max_length],
    )


def _run_text(key: str, value: Any, problems: list[tuple[str, str]]) -> str:
    """A run's text as given, or "" (named) when it is not text that fits the column."""
    limit = _column_length(key)
    if value is None or value == "":
        return ""
    if isinstance(value, str) and len(value) <= limit and storable_text(value):
        return value
    problems.append((f"the run's {key}", f"not text of at most {limit} characters; left empty"))
    return ""


def _run_settings(value: Any, problems: list[tuple[str, str]]) -> dict:
    """arena_run.json's settings, or {} (named) when they are no object PostgreSQL can keep."""
    if value is None:
        return {}
    if isinstance(value, dict) and storable(value):
        return value
    problems.append(("the run's settings", "not a JSON object the database can keep; left empty"))
    return {}


def _stored_or_why(root: Path, run: AgentRun, entry: PublishedRollout, puzzle_id: int) -> str | None:
    """Store one rollout whole, or nothing of it: None when stored, else why it was skipped."""
    try:
        with transaction.atomic():
            _store_rollout(root, run, entry, puzzle_id)
    except Refused as error:
        return str(error)
    except (DatabaseError, ValueError) as error:  # ValueError: psycopg's, a text it cannot encode
        return f"not storable: {str(error).splitlines()[0][:200]}"
    return None


def _store_rollout(root: Path, run: AgentRun, entry: PublishedRollout, puzzle_id: int) -> None:
    """A rollout with its turns and screenshots; arena_turns.json when present, else metafile.json.
    Refused when a file may not be read or a field does not fit (the caller's savepoint undoes it)."""
    summary = entry.summary
    stored = _optional_object(root, entry.folder / "arena_turns.json")
    saved = stored["rollout"] if isinstance(stored.get("rollout"), dict) else {}
    rollout = Rollout(
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
        system_prompt=str(saved.get("system_prompt") or _sft_system_prompt(root, entry.folder)),
        tokens_in=_count(saved.get("tokens_in")),
        tokens_out=_count(saved.get("tokens_out")),
    )
    fits(rollout, "the rollout", exclude=["run", "puzzle", "attempt"])
    rollout.save()
    forget(rollout)  # a folder left by an earlier database under the same id
    listed = stored.get("turns") if isinstance(stored.get("turns"), list) else None
    turns = _turns(rollout, listed) if listed is not None else _metafile_turns(root, rollout, entry.folder)
    for turn in turns:
        fits(turn, f"turn {turn.number}", exclude=["rollout"])
    Turn.objects.bulk_create(turns)
    try:
        _save_screenshots(root, rollout.pk, entry.folder / "screenshots")
    except Refused:
        forget(rollout)  # the screenshots saved before the refused one
        raise


def fits(instance: models.Model, what: str, *, exclude: list[str]) -> None:
    """Refused, naming the field, when an instance does not fit its columns (length, range, type, jsonb)."""
    # A null the column allows is fine whatever `blank` says (Turn.tokens_in is null=True, not blank).
    nulls = [f.name for f in instance._meta.concrete_fields if f.null and getattr(instance, f.attname) is None]
    try:
        instance.full_clean(exclude=exclude + nulls, validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        name, messages = next(iter(error.message_dict.items()))
        raise Refused(f"{what}: {name}: {' '.join(messages)[:200]}") from None
    for column in instance._meta.concrete_fields:
        value = getattr(instance, column.attname)
        # psycopg cannot encode a lone surrogate, PostgreSQL keeps no NUL and jsonb no NaN
        if (isinstance(column, models.JSONField) or isinstance(value, str)) and not storable(value):
            raise Refused(f"{what}: {column.name}: not storable (NaN, infinity, NUL or a lone surrogate)")


def _save_screenshots(root: Path, rollout_id: int, folder: Path) -> None:
    """screenshots/screenshot_step_<n>.png, each a PNG within the caps; Refused at the first that is not."""
    if not os.path.lexists(folder):
        return
    for path in sorted(regular_folder(root, folder).iterdir()):
        match = SCREENSHOT.fullmatch(path.name)
        if match is None:
            continue
        step = int(match.group(1))
        if step > MAX_STEP:
            raise Refused(f"{path.name}: step over {MAX_STEP}")
        save_screenshot(rollout_id, step, screenshot_png(root, path))


def screenshot_png(root: Path, path: Path) -> bytes:
    """A screenshot's bytes, refused unless they decode as a PNG within contained.IMAGE_MAX_PIXELS (the
    header checked before any pixel is read)."""
    try:
        image, data = read_image(root, path)
    except Refused:  # read_image's own, Pillow's bomb check among them
        raise
    except (OSError, ValueError):  # Pillow's: not an image it can read
        raise Refused(f"{path.name} is not a PNG") from None
    if image.format != "PNG":
        raise Refused(f"{path.name} is not a PNG")
    return data


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


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _sft_system_prompt(root: Path, folder: Path) -> str:
    sft = _optional_object(root, folder / "sft_data.json")
    conversation = sft.get("conversations") if isinstance(sft.get("conversations"), list) else []
    first = conversation[0] if conversation and isinstance(conversation[0], dict) else {}
    return first["content"] if first.get("role") == "system" and isinstance(first.get("content"), str) else ""


TURN_KEYS = ("number", "seen", "request", "reply", "calls", "tokens_in", "tokens_out", "latency_ms", "retries", "error")


def _turns(rollout: Rollout, turns: list) -> list[Turn]:
    """Turns as our export stored them."""
    out = []
    for turn in turns:
        if isinstance(turn, dict) and isinstance(turn.get("number"), int):
            out.append(Turn(rollout=rollout, **{key: turn[key] for key in TURN_KEYS if key in turn}))
    return out


ACTION = re.compile(r"^(\w+)(?:\((.*)\))?$", re.S)


def _metafile_turns(root: Path, rollout: Rollout, folder: Path) -> list[Turn]:
    """Turns from the published metafile.json: one executed call a step (its reply's text, the
    call, its result and the screenshot after it)."""
    meta = _optional_object(root, folder / "metafile.json")
    steps = meta["steps"] if isinstance(meta.get("steps"), list) else []
    turns = []
    for number, step in enumerate(s for s in steps if isinstance(s, dict)):
        name, arguments = _call_of(str(step.get("action") or ""))
        reasoning = step.get("reasoning")
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
                reply={"content": reasoning if isinstance(reasoning, str) else ""},
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
    except (ValueError, RecursionError):
        arguments = {}
    if not isinstance(arguments, dict) or nesting(arguments) > JSON_MAX_DEPTH:
        arguments = {}
    return match.group(1), arguments


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
        run = _fresh_run(name, root, {}, model=outputs.model, puzzles=list(matched.values()), problems=problems)
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
