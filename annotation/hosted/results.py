"""A peer's own agent output read as an agent run: `benchmark_results_*.json` (the Flask CAPTCHA
app's `/api/benchmark_results` appends one JSON object a line for each puzzle an agent or a tester
finished), paired with the benchmark's drawn puzzles by family and the peer's puzzle id, so the
report sets people against it on the same puzzles (docs/hosted.md "Agents side by side").

A record's fields, as the peer's server and its agent frameworks write them: `puzzle_type`,
`puzzle_id`, the verdict as `correct` (what the page and the frameworks post) or `is_correct` (its
BENCHMARKING.md), `user_answer` (the answer, or a code saying why none was submitted:
`NO_SUBMIT_*`, `NO_SUBMISSION_MAX_STEPS`, `NAVIGATION_FAILURE`, `ERROR_*`), `model`, `provider`,
`agent_framework` (or `agentFramework`), `elapsed_time`, `timestamp`. Only `correct: true` is a
success, as the peer counts it. A file may also be one JSON list of such objects.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.hosted.registry import HostedError, find_benchmark
from annotation.models import AgentRun, Benchmark, Rollout
from puzzles.hosted_names import hosted_dataset
from puzzles.models import Puzzle

NAME_MAX = AgentRun._meta.get_field("name").max_length
# user_answer when the agent submitted nothing (the peer's BENCHMARKING.md, "Result Classification").
NOT_SUBMITTED = re.compile(r"(NO_SUBMIT|NO_SUBMISSION|NAVIGATION_FAILURE|ERROR_)[A-Z0-9_]*")
SHOWN = 20  # problems named one by one; the rest are counted


@dataclass(frozen=True)
class Record:
    """One line of the file: a puzzle the agent finished, as the peer wrote it."""

    line: int
    family: str
    puzzle_id: str
    correct: bool
    answer: Any
    model: str
    provider: str
    framework: str


@dataclass
class ResultsImport:
    run: AgentRun
    records: int  # lines read as records
    paired: int  # of them, on a drawn puzzle
    puzzles: int  # distinct drawn puzzles paired
    unknown: list[tuple[int, str]] = field(default_factory=list)  # (line, "Family puzzle_id"): no drawn puzzle
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, why): not read


def results_import(*, benchmark: str, path: Path, name: str | None = None, model: str | None = None) -> ResultsImport:
    """Read the file as one agent run of the benchmark (an earlier import of that name is replaced)."""
    found = find_benchmark(benchmark)
    records, problems = read_records(path)
    records = _one_model(records, model, path)
    run_name = name or f"{found.name}:{records[0].model or 'unknown'}:{path.stem}"[:NAME_MAX]
    if AgentRun.objects.filter(name=run_name).exclude(source=AgentRun.Source.IMPORT).exists():
        raise HostedError(f"a run of our harness is named {run_name!r}; give another with --name")
    drawn = _drawn_puzzles(found)
    paired = [
        (record, drawn[(record.family, record.puzzle_id)])
        for record in records
        if (record.family, record.puzzle_id) in drawn
    ]
    unknown = [(r.line, f"{r.family} {r.puzzle_id}") for r in records if (r.family, r.puzzle_id) not in drawn]
    with transaction.atomic():
        run = _fresh_run(run_name, found, path, records, paired, unknown)
    return ResultsImport(run, len(records), len(paired), len({pk for _, pk in paired}), unknown, problems)


def read_records(path: Path) -> tuple[list[Record], list[tuple[int, str]]]:
    """The file's records, and each line that is not one, with why; HostedError when none can be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise HostedError(f"cannot read {path}: {error}") from None
    records: list[Record] = []
    problems: list[tuple[int, str]] = []
    for line, value in _values(text, problems):
        record = _record(line, value)
        if isinstance(record, str):
            problems.append((line, record))
        else:
            records.append(record)
    if not records:
        why = "; ".join(f"line {line}: {reason}" for line, reason in problems[:3]) or "it is empty"
        raise HostedError(f"{path} holds no benchmark result ({why})")
    return records, problems


def _values(text: str, problems: list[tuple[int, str]]) -> list[tuple[int, Any]]:
    """(line, parsed value) for each line of JSON lines, or for each item of one JSON list."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError as error:
            problems.append((error.lineno, f"not JSON: {error.msg}"))
            return []
        return [(index + 1, item) for index, item in enumerate(items)]
    values = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as error:
            problems.append((number, f"not JSON: {error.msg} at column {error.colno}"))
    return values


def _record(line: int, value: Any) -> Record | str:
    """A record, or why the value is not one."""
    if not isinstance(value, dict):
        return "not a JSON object"
    family, puzzle_id = value.get("puzzle_type"), value.get("puzzle_id")
    if not isinstance(family, str) or not family or puzzle_id in (None, ""):
        return "no puzzle_type or puzzle_id"
    verdict = value.get("correct", value.get("is_correct"))
    return Record(
        line=line,
        family=family,
        puzzle_id=str(puzzle_id),
        correct=verdict is True,
        answer=value.get("user_answer"),
        model=str(value.get("model") or ""),
        provider=str(value.get("provider") or ""),
        framework=str(value.get("agent_framework") or value.get("agentFramework") or ""),
    )


def _one_model(records: list[Record], model: str | None, path: Path) -> list[Record]:
    """One run is one model: the file's only one, or the one asked for."""
    models = Counter(r.model for r in records)
    if model is not None:
        mine = [r for r in records if r.model == model]
        if not mine:
            raise HostedError(f"{path} has no record of model {model!r} (it has: {_counted(models)})")
        return mine
    if len(models) > 1:
        raise HostedError(f"{path} mixes models ({_counted(models)}): import each with --model")
    return records


def _counted(counts: Counter[str]) -> str:
    return ", ".join(f"{name or 'unnamed'} ({n})" for name, n in counts.most_common())


def _drawn_puzzles(benchmark: Benchmark) -> dict[tuple[str, str], int]:
    """(family, the peer's puzzle id): the drawn puzzle's pk, for every puzzle that may be served."""
    puzzles = Puzzle.objects.filter(dataset=hosted_dataset(benchmark.name)).exclude(status=Puzzle.Status.FAILED)
    found = {}
    for pk, public in puzzles.values_list("pk", "public"):
        hosted = public.get("hosted") or {}
        if hosted.get("family") and hosted.get("puzzle_id") is not None:
            found[(hosted["family"], str(hosted["puzzle_id"]))] = pk
    return found


def _fresh_run(
    name: str,
    benchmark: Benchmark,
    path: Path,
    records: list[Record],
    paired: list[tuple[Record, int]],
    unknown: list[tuple[int, str]],
) -> AgentRun:
    """The run with a rollout per paired record, in the file's order per puzzle; k is the fewest
    records any paired puzzle has, so every paired puzzle counts with exactly k."""
    AgentRun.objects.filter(name=name, source=AgentRun.Source.IMPORT).delete()
    per_puzzle: dict[int, list[Record]] = defaultdict(list)
    for record, pk in paired:
        per_puzzle[pk].append(record)
    first = records[0]
    run = AgentRun.objects.create(
        name=name,
        source=AgentRun.Source.IMPORT,
        model=first.model[:200],
        protocol=first.framework[:32],
        dataset=hosted_dataset(benchmark.name),
        puzzles=list(per_puzzle),
        rollouts_per_puzzle=min((len(rows) for rows in per_puzzle.values()), default=1),
        settings={
            "benchmark": benchmark.name,
            "provider": first.provider,
            "framework": first.framework,
            "results_file": path.name,
            "records": len(records),
            "unknown_puzzles": len(unknown),
        },
        source_path=str(path)[:500],
    )
    Rollout.objects.bulk_create(
        _rollout(run, pk, index, record) for pk, rows in per_puzzle.items() for index, record in enumerate(rows)
    )
    return run


def _rollout(run: AgentRun, puzzle: int, index: int, record: Record) -> Rollout:
    """A record as a rollout: submitted unless its answer is one of the peer's no-submission codes."""
    code = record.answer if isinstance(record.answer, str) and NOT_SUBMITTED.fullmatch(record.answer) else None
    return Rollout(
        run=run,
        puzzle_id=puzzle,
        index=index,
        status=Rollout.Status.NO_ACTION if code else Rollout.Status.DONE,
        submitted=not code,
        correct=record.correct,
        reason=code or "",
    )
