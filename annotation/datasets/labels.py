"""Puzzle labels: one row per puzzle of a dataset's split, for curating the benchmark and mining
difficulty. `labels export` writes them (JSON lines, CSV or Parquet) with a sidecar
`<file>.rules.json` stating the rules below, the thresholds and every column; the staff's labels
page lists them with filters.

Counting rules (written into every sidecar):
- people: attempts of human participants made in a study (a staff member's try outside a study is
  not counted), scored or gold (practice is left out), by annotators not excluded from that
  study. Each person counts once per puzzle, with their first attempt on it (Pass@1, as the
  report counts). `human_started` is those first attempts; `human_answers` the submitted ones
  whose actions have input evidence; first attempts without it are counted in `no_input` and
  left out of everything else;
- solve rate = human_correct / human_answers, with its 95% Wilson interval (0..1 when there is no
  answer); median active time over the answers (ms, the page's time visible);
- the most common wrong answer: answers the verifier rejected, equal as the review's consensus
  audit compares them (cells as sets, points within a 10-pixel cell, text trimmed); ties go to
  the answer first in sort order; counted in people, not accounts: the answers of annotators who
  joined from one client address count once (an IPv6 address by its /64), so its count is the
  addresses that gave it and its share that count over the addresses with an answer (right or
  wrong); an enrolment with no address recorded counts as its own;
- flags: every flag on the puzzle by reason, whatever became of it, and how many are still open;
- review: `retired` (the puzzle is retired), else `truth_corrected`, else `dismissed` (flags were
  dismissed), else `open` (flags wait for review), else empty; `review_audit` holds the audit
  entries (dismissals, retirements, truth corrections) in time order, without the truth itself;
- agents: per run with rollouts on the puzzle, its first k played rollouts that did not fail (k
  the run's rollouts per puzzle), as the report counts them; fewer than k (failed, or not played
  yet): `complete` false and no difficulty or mining for that run;
- suspect: not retired, and at least one of
  consensus: the most common wrong answer comes from at least SUSPECT_CONSENSUS_PEOPLE people and
  is at least SUSPECT_CONSENSUS_SHARE of the answers;
  flags: at least SUSPECT_OPEN_FLAGS open flags (distinct people: one open flag each);
  people fail: at least SUSPECT_FAIL_MIN_ANSWERS answers and the solve rate's Wilson upper bound
  under SUSPECT_FAIL_HIGH (people clearly cannot solve it);
- people-solvable: `people_solved` of `people_tried` people solved it within the rule's
  attempts each (a person tried it when their first attempt was an answer; solved it within K
  when one of their first K attempts was right with input evidence: annotation/live/solvable.py);
  `people_solvable` when at least the rule's people did (ARC-AGI-2's rule by default: at least
  2 people within 2 attempts; `labels export --solvable-rule N:K` asks another), shown beside
  replay verification (`status`), and a filter wherever puzzles are drawn;
- chance rate: the share of blind guesses the verifier accepts on the puzzle, worked out from the
  type's answer space (`chance_rules` in the sidecar say each type's guess; null for a type with
  nothing to guess, the hold);
- valid: replay-verified (status `verified`: its reference answer passed on the live page; not
  retired, not failed, not a draft) and not suspect;
- difficulty (people): `unknown` under DIFFICULTY_MIN_ANSWERS answers, else by solve rate:
  `easy` at EASY or more, `medium` at MEDIUM or more, `hard` below; (each agent run): the same
  cut-offs over its k rollouts;
- mining: at least one complete agent run solved it in more than 0 and fewer than k of its k
  rollouts (`mining_runs` names them); curate with valid and mining together.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db.models import F, QuerySet

from annotation.live.solvable import ARC_AGI_2, SolvableRule, Solved, people_solved
from annotation.models import AgentRun, Attempt, AuditLog, Enrollment, Flag, Participant, Rollout
from annotation.reporting.stats import wilson_interval
from annotation.review.labels import answer_key, answer_person, join_address  # as the consensus audit counts
from arena_site.csv_cells import TextSink, csv_write
from puzzles.chance import chance_rates, chance_rules
from puzzles.models import Puzzle

RULES = __doc__.split("Counting rules (written into every sidecar):\n", 1)[1].strip()

SUSPECT_CONSENSUS_PEOPLE = 2
SUSPECT_CONSENSUS_SHARE = 1 / 3
SUSPECT_OPEN_FLAGS = 2
SUSPECT_FAIL_MIN_ANSWERS = 3
SUSPECT_FAIL_HIGH = 0.5
DIFFICULTY_MIN_ANSWERS = 3
EASY, MEDIUM = 0.9, 0.6
THRESHOLDS = {
    "SUSPECT_CONSENSUS_PEOPLE": SUSPECT_CONSENSUS_PEOPLE,
    "SUSPECT_CONSENSUS_SHARE": SUSPECT_CONSENSUS_SHARE,
    "SUSPECT_OPEN_FLAGS": SUSPECT_OPEN_FLAGS,
    "SUSPECT_FAIL_MIN_ANSWERS": SUSPECT_FAIL_MIN_ANSWERS,
    "SUSPECT_FAIL_HIGH": SUSPECT_FAIL_HIGH,
    "DIFFICULTY_MIN_ANSWERS": DIFFICULTY_MIN_ANSWERS,
    "EASY": EASY,
    "MEDIUM": MEDIUM,
}
REVIEW_ACTIONS = (
    AuditLog.Action.FLAG_DISMISSED,
    AuditLog.Action.PUZZLE_RETIRED,
    AuditLog.Action.TRUTH_CORRECTED,
)
TRUTH_KEYS = {"old_truth", "new_truth"}  # the audit keeps them; a labels file never carries a truth
DIFFICULTIES = ("easy", "medium", "hard", "unknown")
REVIEWS = ("retired", "truth_corrected", "dismissed", "open", "")

COLUMNS = {
    "puzzle": "the puzzle's uid",
    "type": "puzzle type",
    "dataset": "the puzzle's dataset",
    "split": "its split",
    "source_id": "its id in the dataset (file id for imports, index for generated puzzles)",
    "status": "draft, verified, failed or retired (verified: its reference answer replayed correct)",
    "people_solved": "people who solved it within the rule's attempts each",
    "people_tried": "people whose first attempt on it was an answer",
    "people_solvable": "at least the rule's people solved it within its attempts (solvable_rule)",
    "chance_rate": "a blind guess's chance of passing, from the type's answer space (null: nothing to guess)",
    "truth_public": "its answer is published (anyone can look it up)",
    "human_started": "people with a first attempt on it",
    "human_answers": "their submitted first attempts with input evidence",
    "human_correct": "of those, correct",
    "no_input": "first attempts left out: actions without input evidence",
    "solve_rate": "human_correct / human_answers (null without answers)",
    "solve_ci_low": "95% Wilson interval, low",
    "solve_ci_high": "95% Wilson interval, high",
    "median_active_ms": "median active time of the answers, ms",
    "wrong_top_answer": "the most common wrong answer (JSON), or null",
    "wrong_top_count": "people who gave it (client addresses, not accounts)",
    "wrong_top_share": "its count over the people (addresses) with an answer",
    "wrong_answers": "answers the verifier rejected",
    "flags": "flags by reason, every status ({reason: n}; CSV: flags_<reason>)",
    "open_flags": "flags still open",
    "review": "retired, truth_corrected, dismissed, open or empty",
    "review_audit": "the audit entries (id, action, at, by, details without the truth), oldest first",
    "agents": "per run: run, k, rollouts, correct, failed, solve_rate, complete, difficulty, mining "
    "(CSV: agent:<run>:<field>)",
    "valid": "replay-verified and not suspect",
    "invalid_reasons": "why not valid",
    "suspect": "the suspect rule fired",
    "suspect_reasons": "consensus, flags, people_fail",
    "difficulty": "people: easy, medium, hard or unknown",
    "mining": "some complete agent run solved it in more than 0 and fewer than k of k",
    "mining_runs": "the runs that did",
}


@dataclass(frozen=True)
class LabelSet:
    """The rows and what they were made from."""

    rows: list[dict[str, Any]]
    meta: dict[str, Any]


def puzzle_labels(
    *, dataset: str, split: str, study_id: int | None = None, solvable_rule: SolvableRule = ARC_AGI_2
) -> LabelSet:
    """One row per puzzle of the dataset's split (retired ones too), in the bank's order."""
    puzzles: list[dict[str, Any]] = [
        dict(row)
        for row in Puzzle.objects.filter(dataset=dataset, split=split)
        .order_by("type", "index", "source_id", "pk")
        .values("pk", "uid", "type", "dataset", "split", "source_id", "status", "truth_public")
    ]
    ids = [p["pk"] for p in puzzles]
    people = _human_answers(ids, study_id)
    flags, open_flags = _flags(ids)
    audit = _audit(ids)
    agents, runs = _agents(ids)
    studies = None if study_id is None else [study_id]
    solved = people_solved(ids, within=solvable_rule.attempts, study_ids=studies)
    chance = chance_rates(ids)
    rows = [
        {
            **_row(p, people.get(p["pk"], []), flags.get(p["pk"], {}), open_flags.get(p["pk"], 0), audit, agents),
            **_solvable(solved[p["pk"]], solvable_rule),
            "chance_rate": chance.get(p["pk"]),
        }
        for p in puzzles
    ]
    rows = [{name: row[name] for name in COLUMNS} for row in rows]  # the columns' order
    meta = {
        "dataset": dataset,
        "split": split,
        "study": study_id,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "puzzles": len(rows),
        "rules": RULES,
        "thresholds": THRESHOLDS,
        "columns": COLUMNS,
        "flag_reasons": list(Flag.Reason.values),
        "solvable_rule": {"spec": solvable_rule.spec, "rule": str(solvable_rule)},
        "chance_rules": chance_rules(),
        "runs": runs,
        "counts": {
            "valid": sum(r["valid"] for r in rows),
            "suspect": sum(r["suspect"] for r in rows),
            "mining": sum(r["mining"] for r in rows),
            "mining_and_valid": sum(r["mining"] and r["valid"] for r in rows),
            "people_solvable": sum(r["people_solvable"] for r in rows),
            "people_solvable_and_valid": sum(r["people_solvable"] and r["valid"] for r in rows),
            "difficulty": {d: sum(r["difficulty"] == d for r in rows) for d in DIFFICULTIES},
            "review": {v or "none": sum(r["review"] == v for r in rows) for v in REVIEWS},
        },
    }
    return LabelSet(rows, meta)


# --- people ----------------------------------------------------------------------------------
def people_attempts(study_id: int | None = None, **filters: Any) -> QuerySet[Attempt]:
    """People's attempts as the labels count them: human participants' scored or gold attempts made
    in a study (in that study only, when given)."""
    rows = Attempt.objects.filter(
        participant__kind=Participant.Kind.HUMAN,
        study__isnull=False,
        purpose__in=[Attempt.Purpose.SCORED, Attempt.Purpose.GOLD],
        **filters,
    )
    return rows if study_id is None else rows.filter(study_id=study_id)


def first_per_person(attempts: QuerySet[Attempt], *fields: str) -> Iterator[tuple]:
    """(puzzle_id, *fields) of each person's first attempt on each puzzle among these, annotators
    excluded from that study left out."""
    excluded = set(Enrollment.objects.filter(excluded=True).values_list("study_id", "participant_id"))
    seen: set[tuple[int, int]] = set()
    rows = attempts.order_by("created_at", "pk").values_list("puzzle_id", "participant_id", "study_id", *fields)
    for puzzle, participant, study, *rest in rows.iterator(chunk_size=5000):
        if (study, participant) in excluded or (puzzle, participant) in seen:
            continue
        seen.add((puzzle, participant))
        yield (puzzle, *rest)


def _human_answers(ids: list[int], study_id: int | None) -> dict[int, list[tuple]]:
    """Per puzzle, each counted person's first attempt: (submitted, correct, answer, active_ms,
    input_ok, who: answer_person, one per client address)."""
    out: dict[int, list[tuple]] = defaultdict(list)
    attempts = people_attempts(study_id, puzzle_id__in=ids)
    attempts = attempts.annotate(address=join_address(), account=F("participant_id"))
    for puzzle, submitted_at, correct, answer, active, input_ok, account, address in first_per_person(
        attempts, "submitted_at", "correct", "answer", "active_ms", "input_ok", "account", "address"
    ):
        who = answer_person(participant=account, address=address)
        out[puzzle].append((submitted_at is not None, bool(correct), answer, active, input_ok, who))
    return out


def _people(first: list[tuple]) -> dict[str, Any]:
    no_input = sum(1 for row in first if row[4] is False)
    answers = [row for row in first if row[0] and row[4] is not False]
    correct = sum(1 for row in answers if row[1])
    low, high = wilson_interval(correct, len(answers))
    active = [row[3] for row in answers if row[3] is not None]
    wrong: dict[str, dict[str, Any]] = {}  # answer key -> {who: their answer}: one per address
    for _, is_correct, answer, _, _, who in answers:
        if not is_correct and answer is not None:
            wrong.setdefault(answer_key(answer), {}).setdefault(who, answer)
    top_key = min(wrong, key=lambda k: (-len(wrong[k]), k)) if wrong else None
    top_count = len(wrong[top_key]) if top_key is not None else 0
    answering = len({row[5] for row in answers})
    return {
        "human_started": len(first),
        "human_answers": len(answers),
        "human_correct": correct,
        "no_input": no_input,
        "solve_rate": correct / len(answers) if answers else None,
        "solve_ci_low": low,
        "solve_ci_high": high,
        "median_active_ms": statistics.median(active) if active else None,
        "wrong_top_answer": next(iter(wrong[top_key].values())) if top_key is not None else None,
        "wrong_top_count": top_count,
        "wrong_top_share": top_count / answering if answers else None,
        "wrong_answers": sum(1 for row in answers if not row[1]),
    }


# --- flags and review ------------------------------------------------------------------------
def _flags(ids: list[int]) -> tuple[dict[int, dict[str, int]], dict[int, int]]:
    by_reason: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(Flag.Reason.values, 0))
    still_open: dict[int, int] = defaultdict(int)
    for puzzle, reason, status in Flag.objects.filter(puzzle_id__in=ids).values_list("puzzle_id", "reason", "status"):
        by_reason[puzzle][reason] = by_reason[puzzle].get(reason, 0) + 1
        still_open[puzzle] += status == Flag.Status.OPEN
    return by_reason, still_open


def _audit(ids: list[int]) -> dict[int, list[dict]]:
    entries: dict[int, list[dict]] = defaultdict(list)
    rows = (
        AuditLog.objects.filter(puzzle_id__in=ids, action__in=REVIEW_ACTIONS)
        .order_by("at", "pk")
        .values_list("pk", "puzzle_id", "action", "at", "by__username", "details")
    )
    for pk, puzzle, action, at, by, details in rows:
        kept = {k: v for k, v in (details or {}).items() if k not in TRUTH_KEYS}
        entries[puzzle].append(
            {"id": pk, "action": action, "at": at.isoformat(timespec="seconds"), "by": by, "details": kept}
        )
    return entries


def puzzle_reviews(puzzles: dict[int, str]) -> dict[int, dict[str, Any]]:
    """Per puzzle (id -> status): flags by reason, open flags and the review's outcome, as the
    labels give them, without the audit's entries (they carry staff's notes)."""
    flags, open_flags = _flags(list(puzzles))
    audit = _audit(list(puzzles))
    return {
        pk: {
            "flags": dict(flags.get(pk, {})) or dict.fromkeys(Flag.Reason.values, 0),
            "open_flags": open_flags.get(pk, 0),
            "review": _review(status, audit.get(pk, []), open_flags.get(pk, 0)),
        }
        for pk, status in puzzles.items()
    }


def _review(status: str, entries: list[dict], open_flags: int) -> str:
    actions = {e["action"] for e in entries}
    if status == Puzzle.Status.RETIRED:
        return "retired"
    if AuditLog.Action.TRUTH_CORRECTED in actions:
        return "truth_corrected"
    if AuditLog.Action.FLAG_DISMISSED in actions:
        return "dismissed"
    return "open" if open_flags else ""


# --- agents ----------------------------------------------------------------------------------
def _agents(ids: list[int]) -> tuple[dict[int, list[dict]], list[dict]]:
    """Per puzzle, one entry per run (in the runs' order); and the runs."""
    rollouts = (
        Rollout.objects.filter(puzzle_id__in=ids)
        .order_by("run_id", "puzzle_id", "index")
        .values_list("run_id", "puzzle_id", "status", "correct")
    )
    outcomes: dict[tuple[int, int], list[bool]] = defaultdict(list)
    failed: dict[tuple[int, int], int] = defaultdict(int)
    listed: set[tuple[int, int]] = set()  # pending ones too: the run has the puzzle, not played yet
    for run_id, puzzle, status, right in rollouts.iterator(chunk_size=5000):
        listed.add((run_id, puzzle))
        if status == Rollout.Status.FAILED:
            failed[(run_id, puzzle)] += 1
        elif status != Rollout.Status.PENDING:
            outcomes[(run_id, puzzle)].append(bool(right))
    run_ids = {run_id for run_id, _ in listed}
    runs = list(AgentRun.objects.filter(pk__in=run_ids).order_by("created_at", "pk"))
    per_puzzle: dict[int, list[dict]] = defaultdict(list)
    for run in runs:
        k = run.rollouts_per_puzzle
        for puzzle in ids:
            if (run.pk, puzzle) not in listed:
                continue
            counted = outcomes.get((run.pk, puzzle), [])[:k]
            correct = sum(counted)
            complete = len(counted) == k
            per_puzzle[puzzle].append(
                {
                    "run": run.name,
                    "k": k,
                    "rollouts": len(counted),
                    "correct": correct,
                    "failed": failed.get((run.pk, puzzle), 0),
                    "solve_rate": correct / len(counted) if counted else None,
                    "complete": complete,
                    "difficulty": _bucket(correct / k) if complete else None,
                    "mining": (0 < correct < k) if complete else None,
                }
            )
    described = [
        {"run": r.name, "model": r.model, "protocol": r.protocol, "source": r.source, "k": r.rollouts_per_puzzle}
        for r in runs
    ]
    return per_puzzle, described


# --- the row ---------------------------------------------------------------------------------
def _bucket(rate: float) -> str:
    return "easy" if rate >= EASY else "medium" if rate >= MEDIUM else "hard"


def difficulty(rate: float | None, answers: int) -> str:
    """People's difficulty bucket: unknown with too few answers, else by solve rate."""
    if rate is None or answers < DIFFICULTY_MIN_ANSWERS:
        return "unknown"
    return _bucket(rate)


def valid_puzzles(ids: list[int]) -> set[int]:
    """The puzzles of ids that are valid by the rule above (replay-verified and not suspect), over
    every study's answers, as the labels export of their dataset labels them."""
    verified = list(Puzzle.objects.filter(pk__in=ids, status=Puzzle.Status.VERIFIED).values_list("pk", flat=True))
    people = _human_answers(verified, None)
    _, open_flags = _flags(verified)
    return {
        pk
        for pk in verified
        if not _suspect_reasons(Puzzle.Status.VERIFIED, _people(people.get(pk, [])), open_flags.get(pk, 0))
    }


def _suspect_reasons(status: str, people: dict[str, Any], open_flags: int) -> list[str]:
    if status == Puzzle.Status.RETIRED:
        return []
    reasons = []
    if people["wrong_top_count"] >= SUSPECT_CONSENSUS_PEOPLE and people["wrong_top_share"] >= SUSPECT_CONSENSUS_SHARE:
        reasons.append("consensus")
    if open_flags >= SUSPECT_OPEN_FLAGS:
        reasons.append("flags")
    if people["human_answers"] >= SUSPECT_FAIL_MIN_ANSWERS and people["solve_ci_high"] < SUSPECT_FAIL_HIGH:
        reasons.append("people_fail")
    return reasons


def _row(p: dict, first: list[tuple], flags: dict, open_flags: int, audit: dict, agents: dict) -> dict[str, Any]:
    people = _people(first)
    entries = audit.get(p["pk"], [])
    suspect_reasons = _suspect_reasons(p["status"], people, open_flags)
    invalid = {
        Puzzle.Status.RETIRED: ["retired"],
        Puzzle.Status.FAILED: ["replay failed"],
        Puzzle.Status.DRAFT: ["not replay-verified"],
    }.get(p["status"], [])
    if suspect_reasons:
        invalid.append("suspect")
    runs = agents.get(p["pk"], [])
    mining_runs = [a["run"] for a in runs if a["mining"]]
    return {
        "puzzle": p["uid"],
        "type": p["type"],
        "dataset": p["dataset"],
        "split": p["split"],
        "source_id": p["source_id"],
        "status": p["status"],
        "truth_public": p["truth_public"],
        **people,
        "flags": dict(flags) or dict.fromkeys(Flag.Reason.values, 0),
        "open_flags": open_flags,
        "review": _review(p["status"], entries, open_flags),
        "review_audit": entries,
        "agents": runs,
        "valid": not invalid,
        "invalid_reasons": invalid,
        "suspect": bool(suspect_reasons),
        "suspect_reasons": suspect_reasons,
        "difficulty": difficulty(people["solve_rate"], people["human_answers"]),
        "mining": bool(mining_runs),
        "mining_runs": mining_runs,
    }


def _solvable(solved: Solved, rule: SolvableRule) -> dict[str, Any]:
    return {"people_solved": solved.solved, "people_tried": solved.tried, "people_solvable": solved.passes(rule)}


# --- flat rows (CSV, Parquet) ----------------------------------------------------------------
AGENT_FIELDS = ("k", "rollouts", "correct", "failed", "solve_rate", "complete", "difficulty", "mining")


def flat_columns(meta: dict) -> list[str]:
    """The flat columns, in order: nested values spread out, lists and answers as JSON."""
    columns = []
    for name in COLUMNS:
        if name == "flags":
            columns += [f"flags_{reason}" for reason in meta["flag_reasons"]]
        elif name == "agents":
            columns += [f"agent:{run['run']}:{field}" for run in meta["runs"] for field in AGENT_FIELDS]
        else:
            columns.append(name)
    return columns


def flat_row(row: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in row.items():
        if name == "flags":
            out.update({f"flags_{reason}": n for reason, n in value.items()})
        elif name == "agents":
            for entry in value:
                out.update({f"agent:{entry['run']}:{field}": entry[field] for field in AGENT_FIELDS})
        elif name in ("wrong_top_answer", "review_audit"):
            out[name] = None if value is None or value == [] else json.dumps(value, ensure_ascii=False)
        elif isinstance(value, list):
            out[name] = ";".join(value)
        else:
            out[name] = value
    return out


# --- files -----------------------------------------------------------------------------------
FORMATS = ("jsonl", "csv", "parquet")


class FormatUnavailable(RuntimeError):
    """The format needs a package this installation does not have; the message says which."""


def labels_write(labels: LabelSet, out: str | Path, fmt: str) -> Path:
    """Write the rows to out in the format, and the rules beside it (<out>.rules.json); returns
    the sidecar's path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("jsonl", "csv"):
        with out.open("w", encoding="utf-8", newline="") as stream:
            rows_write(stream, labels.rows, labels.meta, fmt)
    elif fmt == "parquet":
        _parquet(labels, out)
    else:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    sidecar = out.with_name(out.name + ".rules.json")
    sidecar.write_text(json.dumps({**labels.meta, "format": fmt, "file": out.name}, indent=2, ensure_ascii=False))
    return sidecar


def rows_write(stream: TextSink, rows: list[dict], meta: dict, fmt: str) -> None:
    """Rows to a text stream: JSON lines, or CSV in the flat columns (None as empty)."""
    if fmt == "jsonl":
        for row in rows:
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    columns = flat_columns(meta)
    csv_write(stream, [columns, *(flat_cells(row, columns) for row in rows)])


def flat_cells(row: dict, columns: list[str]) -> list:
    """The row's flat values in the columns' order; a value with no column is a bug, not dropped."""
    flat = flat_row(row)
    if not flat.keys() <= set(columns):
        raise ValueError(f"values without a column: {sorted(flat.keys() - set(columns))}")
    return [flat.get(column) for column in columns]


def _parquet(labels: LabelSet, out: Path) -> None:
    """The flat columns (as in CSV, typed), the rules in the file's own metadata too."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise FormatUnavailable(
            "parquet needs pyarrow (a dependency of this project: run make setup): "
            "pip install pyarrow, or use --format jsonl or csv"
        ) from None
    columns = flat_columns(labels.meta)
    flat = [flat_row(row) for row in labels.rows]
    table = pa.table({name: [row.get(name) for row in flat] for name in columns})
    metadata = {b"arena_labels": json.dumps(labels.meta, ensure_ascii=False).encode()}
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata}), out)
