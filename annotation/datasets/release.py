"""A human baseline as a folder to publish beside a paper (docs/datasets.md, "A release"):
`python manage.py release build --study S [--study S2 ...] --out DIR`.

    attempts.parquet, attempts.csv   one row per attempt (scored and gold; practice is not data)
    puzzles.parquet, puzzles.csv     one row per puzzle the studies drew or showed
    agents.parquet, agents.csv       one row per agent run and puzzle: its effort over people's
    release.json                     counts, rules, and each study report's Pass@1 per type, unrounded
    README.md                        the data card
    SHA256SUMS                       every other file's SHA-256 (`sha256sum -c SHA256SUMS`)

The builder re-reads what it wrote (both tables in both formats, and the checksums) and refuses
a folder whose counts disagree.

Privacy by construction: a person appears only as a pseudonym, a keyed hash of the id that names
them in this deployment (their crowd id when the invite link carried one, else their participant
number). The key is derived from the deployment's bank secret and never written anywhere, so two
releases of one deployment give a person the same pseudonym and nobody without the secret can
link a pseudonym to a crowd id. Crowd ids, user names, client addresses and browsers never leave.
Free text stays out unless asked for by name (`--with`): staff's exclusion reasons (the category
`failed gold` or `staff decision` is given instead), flag notes, and typed answers that are not
whole numbers (a text box takes anything, an id included). Staff's audit notes and the consent
text never leave.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings

from annotation.datasets.labels import puzzle_reviews
from annotation.live.solvable import ARC_AGI_2, SolvableRule, people_solved
from annotation.models import Attempt, Enrollment, Flag, Participant, Slot, Study
from annotation.reporting.effort import RULE as EFFORT_RULE
from annotation.reporting.effort import TypeEffort, study_effort
from annotation.reporting.report_types import StudyReport
from annotation.reporting.reports import study_report
from annotation.reporting.wording import fmt_pass1, fmt_pct, interval_note
from annotation.studies.quality import attempt_marks
from annotation.studies.queue import FAILED_GOLD
from arena_site.csv_cells import csv_write
from puzzles.chance import chance_rates, type_chance
from puzzles.models import Puzzle
from puzzles.registry import registry

# What --with may add, by name: the free text a release leaves out otherwise.
FREE_TEXT = {
    "exclusion_reasons": "staff's reason for excluding a person, as written (else: failed gold or staff decision)",
    "flag_notes": "people's notes on the flags they raised (puzzles: flag_notes)",
    "typed_text": "typed answers that are not whole numbers (else: withheld, answer_withheld true)",
}
PSEUDONYM_PURPOSE = b"captcha-arena release pseudonyms v1"
WHOLE_NUMBER = re.compile(r"\s*-?[0-9]{1,9}\s*")
TABLES = ("attempts", "puzzles", "agents")
DEFAULT_LICENCE = "CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/)"

# Each column: its Parquet type and its meaning (the data card's column table).
ATTEMPT_COLUMNS: dict[str, tuple[str, str]] = {
    "study": ("string", "the study's name"),
    "dataset": ("string", "the puzzle's dataset (generated:<bank>, import:<name>)"),
    "split": ("string", "its split"),
    "type": ("string", "puzzle type"),
    "puzzle": ("string", "the puzzle's id (puzzles.puzzle)"),
    "source_id": ("string", "its id in its dataset (the file id of an imported puzzle)"),
    "participant": ("string", "the person's pseudonym: the same person, the same pseudonym, in every release"),
    "place": ("int64", "the attempt's place in that person's run of the study, from 1 (gold counts)"),
    "try": ("int64", "the person's attempt number on this puzzle, from 1 (retries after a wrong answer)"),
    "purpose": ("string", "scored or gold (a puzzle with a known answer, for quality control)"),
    "start": ("string", "when its puzzle was first shown, ISO 8601 UTC"),
    "wall_s": ("double", "page shown to submit, seconds, by the page's clock"),
    "active_s": ("double", "wall time less the time the page was hidden, seconds"),
    "actions": ("int64", "semantic actions before the submit"),
    "submitted": ("bool", "an answer was submitted"),
    "correct": ("bool", "the server's verifier accepted it (null: not submitted)"),
    "answer": ("string", "the answer as the published grader reads it, JSON (null: none, or withheld)"),
    "answer_withheld": ("bool", "a typed answer that is not a whole number, left out (free text)"),
    "marks": ("string", "quality marks, ;-separated: fast, hidden, tabs, no_input (no input behind the actions)"),
    "excluded": ("bool", "the person was excluded from the study: left out of every figure"),
    "excluded_why": ("string", "failed gold or staff decision (staff's own words with --with exclusion_reasons)"),
}
PUZZLE_COLUMNS: dict[str, tuple[str, str]] = {
    "dataset": ("string", "the puzzle's dataset"),
    "split": ("string", "its split"),
    "type": ("string", "puzzle type"),
    "puzzle": ("string", "the puzzle's id"),
    "source_id": ("string", "its id in its dataset"),
    "replay_verified": ("bool", "its reference answer replayed correct on the live page"),
    "status": ("string", "draft, verified, failed or retired"),
    "people_tried": ("int64", "n: people whose first attempt on it was an answer (excluded people left out)"),
    "people_solved_first": ("int64", "of them, right on their first attempt"),
    "people_solved": ("int64", "k: of them, right within `solved_within` attempts each"),
    "solved_within": ("int64", "the attempts the people-solvable rule allows each person"),
    "people_solvable": ("bool", "k is at least the rule's people (README: the rule)"),
    "chance_rate": ("double", "a blind guess's chance of passing, from the type's answer space (null: none)"),
    "flags": ("int64", "flags people raised on it, any reason, any outcome"),
    "flag_reasons": ("string", "those flags by reason, JSON {reason: n}"),
    "open_flags": ("int64", "flags still waiting for review"),
    "review": ("string", "retired, truth_corrected, dismissed, open or empty"),
}
AGENT_COLUMNS: dict[str, tuple[str, str]] = {
    "run": ("string", "the agent run's name"),
    "dataset": ("string", "the puzzle's dataset"),
    "type": ("string", "puzzle type"),
    "puzzle": ("string", "the puzzle's id"),
    "rollouts": ("int64", "the run's counted rollouts on it that reached the page"),
    "people": ("int64", "people's counted answers on it (first attempts, submitted, with input)"),
    "agent_actions": ("double", "the run's median semantic actions before the submit"),
    "people_actions": ("double", "people's median semantic actions"),
    "actions_ratio": ("double", "agent_actions over people_actions: the run's effort as a multiple of people's"),
    "agent_active_s": ("double", "the run's median active seconds (model latency included)"),
    "people_active_s": ("double", "people's median active seconds"),
    "time_ratio": ("double", "agent_active_s over people_active_s"),
}
FLAG_NOTES_COLUMN = ("string", "the flags' notes, JSON list (only with --with flag_notes)")


class ReleaseError(RuntimeError):
    """A release that cannot be built or failed its own check; the message says why."""


@dataclass(frozen=True)
class ReleaseOptions:
    solvable_rule: SolvableRule = ARC_AGI_2
    with_text: frozenset[str] = frozenset()
    title: str = ""
    licence: str = DEFAULT_LICENCE
    citation: str = ""
    pay: str = ""


@dataclass
class Release:
    """What was written, and the counts the re-read confirmed."""

    out: Path
    counts: dict[str, int]
    checksums: dict[str, str] = field(default_factory=dict)


def release_build(*, studies: list[Study], out: Path, options: ReleaseOptions | None = None) -> Release:
    """Write the release of these studies to out (made if missing; files of the same names are
    replaced) and check it by reading it back."""
    options = options or ReleaseOptions()
    unknown = sorted(options.with_text - set(FREE_TEXT))
    if unknown:
        raise ReleaseError(f"--with takes {', '.join(FREE_TEXT)}; not {', '.join(unknown)}")
    if not studies:
        raise ReleaseError("a release needs at least one study")
    attempts = attempt_rows(studies, options)
    if not attempts:
        raise ReleaseError(f"no attempts of people in {', '.join(s.name for s in studies)}: nothing to release")
    puzzles = puzzle_rows(studies, attempts, options)
    agents, agent_types = agent_rows(studies, puzzles)
    reports = [study_report(study=study) for study in studies]
    out.mkdir(parents=True, exist_ok=True)
    columns = {"attempts": dict(ATTEMPT_COLUMNS), "puzzles": _puzzle_columns(options), "agents": dict(AGENT_COLUMNS)}
    tables = {"attempts": attempts, "puzzles": puzzles, "agents": agents}
    for name in TABLES:
        _write_table(out, name, tables[name], columns[name])
    meta = release_meta(studies, attempts, puzzles, reports, options)
    meta["counts"]["agent_rows"] = len(agents)
    meta["effort"] = {"rule": EFFORT_RULE, "types": agent_types}
    (out / "release.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "README.md").write_text(data_card(meta, columns, options), encoding="utf-8")
    checksums = _write_checksums(out)
    counts = {name: len(tables[name]) for name in TABLES}
    release_check(out, counts)
    return Release(out=out, counts=counts, checksums=checksums)


# --- people -----------------------------------------------------------------------------------
def pseudonym_key() -> bytes:
    """The deployment's key for pseudonyms: derived from its bank secret (stable for as long as
    its puzzles are), for this purpose only; never written to a file."""
    secret = str(settings.PUZZLE_BANK_SECRET).encode()
    return hmac.new(secret, PSEUDONYM_PURPOSE, hashlib.sha256).digest()


def pseudonym(key: bytes, *, crowd_id: str, participant_id: int) -> str:
    """A person's name in a release: a keyed hash of their crowd id, else their participant number."""
    person = f"crowd:{crowd_id}" if crowd_id else f"participant:{participant_id}"
    return "p" + hmac.new(key, person.encode(), hashlib.sha256).hexdigest()[:16]


def _excluded_why(enrollment: Enrollment | None, with_text: frozenset[str]) -> str:
    if enrollment is None or not enrollment.excluded:
        return ""
    if "exclusion_reasons" in with_text or enrollment.excluded_reason == FAILED_GOLD:
        return enrollment.excluded_reason
    return "staff decision"


# --- attempts ---------------------------------------------------------------------------------
def release_attempts(studies: list[Study]) -> list[Attempt]:
    """The attempts a release holds: people's scored and gold attempts in these studies, in the
    order each person made them."""
    return list(
        Attempt.objects.filter(
            study__in=studies,
            participant__kind=Participant.Kind.HUMAN,
            purpose__in=[Attempt.Purpose.SCORED, Attempt.Purpose.GOLD],
        )
        .select_related("puzzle", "study")
        .defer("puzzle__truth", "puzzle__masks")  # the truth never comes near a release
        .order_by("study_id", "participant_id", "created_at", "pk")
    )


def attempt_rows(studies: list[Study], options: ReleaseOptions) -> list[dict[str, Any]]:
    key = pseudonym_key()
    enrollments = {(e.study_id, e.participant_id): e for e in Enrollment.objects.filter(study__in=studies)}
    marks: dict[int, list[str]] = {}
    for study in studies:
        marks.update(attempt_marks(study=study))
    tries: Counter[tuple[int, int, int]] = Counter()
    rows = []
    for attempt in release_attempts(studies):
        study_id = attempt.study_id or 0  # every release attempt has its study (the query's filter)
        enrollment = enrollments.get((study_id, attempt.participant_id))
        tries[(study_id, attempt.participant_id, attempt.puzzle_id)] += 1
        answer, withheld = _answer(attempt, options.with_text)
        rows.append(
            {
                "study": attempt.study.name if attempt.study else "",
                "dataset": attempt.puzzle.dataset,
                "split": attempt.puzzle.split,
                "type": attempt.puzzle.type,
                "puzzle": attempt.puzzle.uid,
                "source_id": attempt.puzzle.source_id,
                "participant": pseudonym(
                    key, crowd_id=enrollment.crowd_id if enrollment else "", participant_id=attempt.participant_id
                ),
                "place": attempt.position,
                "try": tries[(study_id, attempt.participant_id, attempt.puzzle_id)],
                "purpose": attempt.purpose,
                "start": (attempt.served_at or attempt.created_at).isoformat(timespec="milliseconds"),
                "wall_s": _seconds(attempt.wall_ms),
                "active_s": _seconds(attempt.active_ms),
                "actions": attempt.action_count,
                "submitted": attempt.submitted_at is not None,
                "correct": attempt.correct if attempt.submitted_at is not None else None,
                "answer": answer,
                "answer_withheld": withheld,
                "marks": ";".join(marks.get(attempt.pk, [])),
                "excluded": bool(enrollment and enrollment.excluded),
                "excluded_why": _excluded_why(enrollment, options.with_text),
                "_puzzle_pk": attempt.puzzle_id,
            }
        )
    return rows


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)


def _answer(attempt: Attempt, with_text: frozenset[str]) -> tuple[str | None, bool]:
    """The submitted answer as JSON in the published layout, and whether free text was withheld."""
    if attempt.submitted_at is None or attempt.answer is None:
        return None, False
    answer = attempt.answer
    if isinstance(answer, str) and "typed_text" not in with_text and not WHOLE_NUMBER.fullmatch(answer):
        return None, True
    if attempt.puzzle.type in registry():
        answer = registry().get(attempt.puzzle.type).published_answer(answer, attempt.puzzle.public)
    return json.dumps(answer, ensure_ascii=False), False


# --- puzzles ----------------------------------------------------------------------------------
def puzzle_rows(studies: list[Study], attempts: list[dict], options: ReleaseOptions) -> list[dict[str, Any]]:
    """Every puzzle the studies drew (their pools) or showed (gold), in the bank's order."""
    ids = set(Slot.objects.filter(study__in=studies).values_list("puzzle_id", flat=True))
    ids |= {row["_puzzle_pk"] for row in attempts}
    puzzles = list(
        Puzzle.objects.filter(pk__in=ids)
        .order_by("dataset", "type", "index", "source_id", "pk")
        .values("pk", "uid", "type", "dataset", "split", "source_id", "status")
    )
    study_ids = [s.pk for s in studies]
    rule = options.solvable_rule
    first = people_solved(ids, within=1, study_ids=study_ids)
    within = people_solved(ids, within=rule.attempts, study_ids=study_ids)
    chance = chance_rates(ids)
    reviews = puzzle_reviews({p["pk"]: p["status"] for p in puzzles})
    notes = _flag_notes(ids) if "flag_notes" in options.with_text else None
    rows = []
    for p in puzzles:
        review = reviews[p["pk"]]
        row = {
            "dataset": p["dataset"],
            "split": p["split"],
            "type": p["type"],
            "puzzle": p["uid"],
            "source_id": p["source_id"],
            "replay_verified": p["status"] == Puzzle.Status.VERIFIED,
            "status": p["status"],
            "people_tried": within[p["pk"]].tried,
            "people_solved_first": first[p["pk"]].solved,
            "people_solved": within[p["pk"]].solved,
            "solved_within": rule.attempts,
            "people_solvable": within[p["pk"]].passes(rule),
            "chance_rate": chance.get(p["pk"]),
            "flags": sum(review["flags"].values()),
            "flag_reasons": json.dumps({k: v for k, v in review["flags"].items() if v}, sort_keys=True),
            "open_flags": review["open_flags"],
            "review": review["review"],
            "_puzzle_pk": p["pk"],
        }
        if notes is not None:
            row["flag_notes"] = json.dumps(notes.get(p["pk"], []), ensure_ascii=False)
        rows.append(row)
    return rows


def _flag_notes(ids: set[int]) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for puzzle, note in (
        Flag.objects.filter(puzzle_id__in=ids).exclude(note="").order_by("pk").values_list("puzzle_id", "note")
    ):
        found.setdefault(puzzle, []).append(note)
    return found


# --- agents -----------------------------------------------------------------------------------
def agent_rows(studies: list[Study], puzzles: list[dict]) -> tuple[list[dict[str, Any]], list[TypeEffort]]:
    """Each agent run on the release's puzzles against its people (annotation/reporting/effort.py)."""
    by_pk = {p["_puzzle_pk"]: p for p in puzzles}
    rows, types = study_effort([s.pk for s in studies], {pk: p["type"] for pk, p in by_pk.items()})
    out = []
    for row in rows:
        puzzle = by_pk[row["puzzle"]]
        out.append({**row, "puzzle": puzzle["puzzle"], "dataset": puzzle["dataset"]})
    return out, types


# --- the figures --------------------------------------------------------------------------------
def release_meta(
    studies: list[Study], attempts: list[dict], puzzles: list[dict], reports: list[StudyReport], options: ReleaseOptions
) -> dict[str, Any]:
    """release.json: what the data card says, as numbers (the report's unrounded)."""
    people = {row["participant"] for row in attempts}
    excluded = {row["participant"] for row in attempts if row["excluded"]}
    starts = sorted(row["start"] for row in attempts)
    types = {p["_puzzle_pk"]: p["type"] for p in puzzles}
    chance = type_chance({p["_puzzle_pk"]: p["chance_rate"] for p in puzzles}, types)
    rule = options.solvable_rule
    return {
        "title": options.title or f"Human baseline: {', '.join(s.name for s in studies)}",
        "counts": {
            "attempts": len(attempts),
            "scored": sum(row["purpose"] == Attempt.Purpose.SCORED for row in attempts),
            "gold": sum(row["purpose"] == Attempt.Purpose.GOLD for row in attempts),
            "submitted": sum(row["submitted"] for row in attempts),
            "people": len(people),
            "people_excluded": len(excluded),
            "attempts_of_excluded_people": sum(row["excluded"] for row in attempts),
            "attempts_marked_no_input": sum("no_input" in row["marks"].split(";") for row in attempts),
            "answers_withheld": sum(row["answer_withheld"] for row in attempts),
            "puzzles": len(puzzles),
            "puzzles_people_solvable": sum(p["people_solvable"] for p in puzzles),
            "puzzles_replay_verified": sum(p["replay_verified"] for p in puzzles),
        },
        "excluded_people_by_why": _excluded_people_by_why(attempts),
        "dates": {"first_start": starts[0] if starts else None, "last_start": starts[-1] if starts else None},
        "studies": [_study_entry(study, report) for study, report in zip(studies, reports)],
        "solvable_rule": {"spec": rule.spec, "rule": str(rule)},
        "chance": chance,
        "with": sorted(options.with_text),
        "licence": options.licence,
        "generated_at": datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def _excluded_people_by_why(attempts: list[dict]) -> dict[str, int]:
    seen: dict[str, str] = {}
    for row in attempts:
        if row["excluded"]:
            seen.setdefault(f"{row['study']}\n{row['participant']}", row["excluded_why"])
    return dict(Counter(seen.values()))


def _study_entry(study: Study, report: StudyReport) -> dict[str, Any]:
    """A study's facts and its report's Pass@1 per type, as the report gives them."""
    return {
        "name": study.name,
        "split": study.split,
        "dataset": study.dataset or None,
        "overlap": study.overlap,
        "attempts_per_puzzle": study.attempts_allowed,
        "time_limit_s": study.time_limit_s,
        "duration_minutes": study.duration_minutes,
        "people_solvable_pool": study.people_solvable or None,
        "annotators": report["annotators"],
        "excluded_annotators": report["excluded_annotators"],
        "interval_note": interval_note(report),
        "types": [
            {
                "type": row["type"],
                "pass1": row["pass1"],
                "ci_low": row["ci_low"],
                "ci_high": row["ci_high"],
                "ci_method": row["ci_method"],
                "ci_people": row["ci_people"],
                "attempts": row["attempts"],
                "puzzles": row["puzzles"],
                "annotators": row["annotators"],
            }
            for row in report["types"]
        ],
        "mean_pass1_over_types": report["overall"]["mean_pass1_over_types"],
        "mean_ci_low": report["overall"]["mean_ci_low"],
        "mean_ci_high": report["overall"]["mean_ci_high"],
        "mean_ci_method": report["overall"]["mean_ci_method"],
        "dropped_types": [row["type"] for row in report["dropped_types"]],
    }


# --- files ------------------------------------------------------------------------------------
def _puzzle_columns(options: ReleaseOptions) -> dict[str, tuple[str, str]]:
    columns = dict(PUZZLE_COLUMNS)
    if "flag_notes" in options.with_text:
        columns["flag_notes"] = FLAG_NOTES_COLUMN
    return columns


def _write_table(out: Path, name: str, rows: list[dict], columns: dict[str, tuple[str, str]]) -> None:
    """<name>.parquet (typed, pyarrow) and <name>.csv (the site's one CSV writer), the same rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(column, pa.type_for_alias(kind)) for column, (kind, _) in columns.items()])
    table = pa.table({column: [row.get(column) for row in rows] for column in columns}, schema=schema)
    pq.write_table(table, out / f"{name}.parquet")
    with (out / f"{name}.csv").open("w", encoding="utf-8", newline="") as stream:
        csv_write(stream, [list(columns), *([row.get(column) for column in columns] for row in rows)])


def _write_checksums(out: Path) -> dict[str, str]:
    sums = {path.name: _sha256(path) for path in sorted(out.iterdir()) if path.name in RELEASE_FILES}
    lines = [f"{digest}  {name}" for name, digest in sums.items()]
    (out / "SHA256SUMS").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sums


RELEASE_FILES = (*(f"{t}.{ext}" for t in TABLES for ext in ("parquet", "csv")), "release.json", "README.md")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def release_check(out: Path, counts: dict[str, int]) -> None:
    """Read the release back as a user would: each table in both formats holds the rows written,
    release.json says so too, and every checksum matches. ReleaseError naming what differs."""
    import pyarrow.parquet as pq

    problems = []
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    for name in TABLES:
        parquet_rows = pq.read_table(out / f"{name}.parquet").num_rows
        with (out / f"{name}.csv").open(encoding="utf-8", newline="") as stream:
            csv_rows = sum(1 for _ in csv.reader(stream)) - 1
        said = meta["counts"]["agent_rows" if name == "agents" else name]
        if not parquet_rows == csv_rows == said == counts[name]:
            problems.append(
                f"{name}: {counts[name]} written, parquet {parquet_rows}, csv {csv_rows}, release.json {said}"
            )
    listed: dict[str, str] = {}
    for line in (out / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    for name in RELEASE_FILES:
        if listed.get(name) != _sha256(out / name):
            problems.append(f"{name}: its SHA-256 differs from SHA256SUMS")
    if problems:
        raise ReleaseError("the release read back differs from what was written: " + "; ".join(problems))


# --- the data card ----------------------------------------------------------------------------
def data_card(meta: dict[str, Any], columns: dict[str, dict[str, tuple[str, str]]], options: ReleaseOptions) -> str:
    """README.md: who, what, when, how counted, the headline figures as each report gives them,
    what every column means, what was left out, licence and citation."""
    counts = meta["counts"]
    parts = [
        f"# {meta['title']}\n",
        f"Per-attempt human baseline on interactive CAPTCHA puzzles (CaptchaArena's 20 types), scored by the same "
        f"server verifiers that score agents: {counts['attempts']} attempts by {counts['people']} people on "
        f"{counts['puzzles']} puzzles, started {_day(meta['dates']['first_start'])} to "
        f"{_day(meta['dates']['last_start'])}.\n",
        _files_section(),
        _people_section(meta, options),
        _exclusion_section(meta),
        *(_study_section(study, meta["chance"]) for study in meta["studies"]),
        _solvable_section(meta),
        _chance_section(meta["chance"]),
        _effort_section(meta["effort"]),
        _columns_section(columns),
        _privacy_section(meta),
        f"## Licence\n\n{meta['licence']}\n",
        _citation_section(meta, options),
    ]
    return "\n".join(parts)


def _day(iso: str | None) -> str:
    return iso[:10] if iso else "–"


def _files_section() -> str:
    return (
        "## Files\n\n"
        "| file | what |\n|---|---|\n"
        "| `attempts.parquet`, `attempts.csv` | one row per attempt (the same rows in both) |\n"
        "| `puzzles.parquet`, `puzzles.csv` | one row per puzzle drawn or shown |\n"
        "| `agents.parquet`, `agents.csv` | one row per agent run and puzzle: its effort as a multiple of people's |\n"
        "| `release.json` | the counts and figures below, unrounded |\n"
        "| `SHA256SUMS` | checksums of the other files: `sha256sum -c SHA256SUMS` |\n\n"
        "Both open with no code of ours, e.g. `pandas.read_parquet('attempts.parquet')` or "
        "`pandas.read_csv('puzzles.csv')`. A CSV text cell that a spreadsheet would run as a formula "
        "starts with an apostrophe.\n"
    )


def _people_section(meta: dict[str, Any], options: ReleaseOptions) -> str:
    counts = meta["counts"]
    lines = [
        "## People and attempts\n",
        f"- People: {counts['people']} (pseudonymous), of whom {counts['people_excluded']} excluded.",
        f"- Attempts: {counts['attempts']} ({counts['scored']} scored, {counts['gold']} gold), "
        f"{counts['submitted']} submitted. Practice attempts are not included.",
        f"- Dates: first puzzle shown {meta['dates']['first_start']}, last {meta['dates']['last_start']} (UTC).",
        f"- Pay: {options.pay or 'not given (the platform records no pay; the study ran on its crowd platform)'}.",
        "",
        "| study | split | dataset | people per puzzle | attempts per puzzle | time limit | duration | pool |",
        "|---|---|---|---:|---:|---|---|---|",
    ]
    for study in meta["studies"]:
        limit = f"{study['time_limit_s']} s" if study["time_limit_s"] else "none"
        duration = f"about {study['duration_minutes']} min" if study["duration_minutes"] else "not given"
        pool = (
            f"people-solvable {study['people_solvable_pool']}" if study["people_solvable_pool"] else "replay-verified"
        )
        lines.append(
            f"| {study['name']} | {study['split']} | {study['dataset'] or 'every dataset of the split'} | "
            f"{study['overlap']} | {study['attempts_per_puzzle']} | {limit} | {duration} | {pool} |"
        )
    return "\n".join(lines) + "\n"


def _exclusion_section(meta: dict[str, Any]) -> str:
    counts, why = meta["counts"], meta["excluded_people_by_why"]
    reasons = ", ".join(f"{reason or 'no reason'}: {n}" for reason, n in sorted(why.items())) or "none"
    return (
        "## Exclusions\n\n"
        "Every attempt is here, excluded people's too (`excluded`, `excluded_why`); the figures below leave them "
        "out, as the study report does. A person is excluded by the gold rule (`failed gold`: too many wrong "
        "answers on puzzles with a known answer) or by staff (`staff decision`). Pass@1 counts each included "
        "person's first attempt on each puzzle, submitted, with input behind its actions: an attempt marked "
        "`no_input` (semantic actions with no pointer or key input behind them) is left out.\n\n"
        f"- People excluded: {counts['people_excluded']} ({reasons}); their attempts: "
        f"{counts['attempts_of_excluded_people']}.\n"
        f"- Attempts marked `no_input`: {counts['attempts_marked_no_input']}.\n"
        f"- Typed answers withheld as free text: {counts['answers_withheld']}.\n"
    )


def _study_section(study: dict[str, Any], chance: dict[str, Any]) -> str:
    """People's Pass@1 per type as the study's report gives it (its own formatting), the chance
    rate beside it."""
    lines = [
        f"## Pass@1 per type: {study['name']}\n",
        f"From the study's report ({study['annotators']} people counted, {study['excluded_annotators']} excluded). "
        + study["interval_note"],
        "",
        "| type | Pass@1 [95% CI] | interval | people | puzzles | answers | chance rate |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for row in study["types"]:
        rate = chance.get(row["type"], {}).get("rate")
        lines.append(
            f"| {row['type']} | {fmt_pass1(row['pass1'], row['ci_low'], row['ci_high'])} | {row['ci_method'] or '–'} | "
            f"{row['annotators']} | {row['puzzles']} | {row['attempts']} | {_chance_text(rate)} |"
        )
    mean = fmt_pass1(study["mean_pass1_over_types"], study["mean_ci_low"], study["mean_ci_high"])
    lines.append(f"| Mean over types | {mean} | {study['mean_ci_method'] or '–'} | | | | |")
    if study["dropped_types"]:
        lines.append(f"\nTypes without people's Pass@1 (see the report): {', '.join(study['dropped_types'])}.")
    return "\n".join(lines) + "\n"


def _chance_text(rate: float | None) -> str:
    if rate is None:
        return "none"
    return f"{fmt_pct(rate, 2)}" if rate >= 0.0001 else "< 0.01%"


def _solvable_section(meta: dict[str, Any]) -> str:
    counts = meta["counts"]
    return (
        "## People-solvable puzzles\n\n"
        f"Rule: {meta['solvable_rule']['rule']} (`{meta['solvable_rule']['spec']}`; ARC-AGI-2 keeps a task only if "
        "at least 2 people solved it within 2 attempts). Counted over this release's people, excluded people left "
        "out: `people_tried` (n), `people_solved` (k within `solved_within` attempts), `people_solvable`. "
        "More than one attempt counts only where the study offered a retry after a wrong answer.\n\n"
        f"{counts['puzzles_people_solvable']} of {counts['puzzles']} puzzles are people-solvable; "
        f"{counts['puzzles_replay_verified']} are replay-verified (`replay_verified`).\n"
    )


def _chance_section(chance: dict[str, Any]) -> str:
    lines = [
        "## Chance rates\n",
        "What a blind guess scores: an answer drawn from what the page lets anyone enter, knowing nothing the "
        "pictures show, sent through the same verifier. Worked out per puzzle from its answer space "
        "(`puzzles.chance_rate`); per type, the mean over its puzzles here. Read an agent's score against it.\n",
        "| type | chance rate | puzzles | the guess |",
        "|---|---:|---:|---|",
    ]
    for name, entry in chance.items():
        lines.append(f"| {name} | {_chance_text(entry['rate'])} | {entry['puzzles']} | {entry['rule']} |")
    return "\n".join(lines) + "\n"


def _effort_section(effort: dict[str, Any]) -> str:
    lines = [
        "## Agent-over-human effort\n",
        "Per puzzle (`agents`), an agent run's median actions and active time as a multiple of people's median "
        "on the same puzzle; per type, the median of those multiples. " + " ".join(effort["rule"].split()),
        "",
    ]
    if not effort["types"]:
        return "\n".join([*lines, "No agent run played these puzzles.\n"])
    lines += [
        "| run | type | actions × people's | puzzles | time × people's | puzzles |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in effort["types"]:
        lines.append(
            f"| {row['run']} | {row['type']} | {_times(row['actions_ratio'])} | {row['puzzles']} | "
            f"{_times(row['time_ratio'])} | {row['time_puzzles']} |"
        )
    return "\n".join(lines) + "\n"


def _times(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio:.2f}×"


def _columns_section(columns: dict[str, dict[str, tuple[str, str]]]) -> str:
    parts = ["## Columns\n"]
    for table, declared in columns.items():
        parts.append(f"`{table}`\n\n| column | type | meaning |\n|---|---|---|")
        parts += [f"| `{name}` | {kind} | {meaning} |" for name, (kind, meaning) in declared.items()]
        parts.append("")
    return "\n".join(parts)


def _privacy_section(meta: dict[str, Any]) -> str:
    asked = ", ".join(meta["with"]) or "none"
    return (
        "## What leaves, and what does not\n\n"
        "A person is a pseudonym: a keyed hash (HMAC-SHA-256) of the id that names them on the platform (their "
        "crowd-platform id, else their participant number). The key stays with the deployment, so its releases "
        "give a person the same pseudonym, and nobody else can link a pseudonym to an id. Never in a release: "
        "crowd ids (PROLIFIC_PID, workerId and the like), user names, client addresses, browsers, the consent "
        "text, staff's review notes, puzzle truths and masks. Free text only when asked for by name: staff's "
        "exclusion reasons, flag notes, typed answers that are not whole numbers. "
        f"Asked for in this release: {asked}.\n"
    )


def _citation_section(meta: dict[str, Any], options: ReleaseOptions) -> str:
    if options.citation:
        return f"## How to cite\n\n{options.citation}\n"
    year = (meta["dates"]["last_start"] or meta["generated_at"])[:4]
    return (
        "## How to cite\n\n"
        "Cite the paper this release accompanies, and the release itself:\n\n"
        f"```bibtex\n@misc{{human_baseline_{year},\n  title = {{{meta['title']}}},\n  year = {{{year}}},\n"
        "  note = {Per-attempt human baseline, CaptchaArena puzzle types}\n}\n```\n"
    )
