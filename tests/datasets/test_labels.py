"""Puzzle labels over a study built here, against counts worked out by hand."""

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import AgentRun, Attempt, AuditLog, Flag, Rollout, Study
from annotation.review.labels import flag_dismiss, flag_raise, puzzle_correct_truth, puzzle_retire
from annotation.studies.quality import enrollment_exclude

pytestmark = pytest.mark.django_db

from .conftest import People  # noqa: E402


@pytest.fixture
def built(dice):
    """Four Dice_Count puzzles, worked through by hand:

    P0 easy:       ann, bob, cat, dan, eve right (5/5); fay's answer has no input evidence;
                   one ambiguous flag, dismissed; agents: run A 3/3, run B 1/1
    P1 consensus:  ann, bob right; cat, dan, eve type the same wrong sum (3 of 5); one open flag;
                   run A 1/3 (mining)
    P2 corrected:  ann right; bob, cat, dan, eve type the same wrong sum, then the truth is
                   corrected to that sum: 4/5 right, ann now wrong; run A failed once, then 0/3
    P3 retired:    ann, bob right; two broken flags, then the puzzle is retired; run A 2/3
    gus answers everything wrong and is excluded from the study: never counted.
    """
    p0, p1, p2, p3 = dice(4)
    study = Study.objects.create(name="Labels by hand", split="test", puzzles_per_annotator=4, overlap=7)
    people = People(study)
    boss = get_user_model().objects.create_user("boss", is_staff=True)
    for name in ("ann", "bob", "cat", "dan", "eve"):
        people.answer(name, p0, True)
    people.answer_without_input("fay", p0, str(p0.truth["sum"]))
    for name, right in (("ann", True), ("bob", True), ("cat", False), ("dan", False), ("eve", False)):
        people.answer(name, p1, right)
    for name, right in (("ann", True), ("bob", False), ("cat", False), ("dan", False), ("eve", False)):
        people.answer(name, p2, right)
    first_p3 = people.answer("ann", p3, True)
    people.answer("bob", p3, True)
    for puzzle in (p0, p1, p2, p3):
        people.answer("gus", puzzle, False)
    enrollment_exclude(enrollment=study.enrollments.get(participant=people("gus")), by=boss, reason="all wrong")

    dismissed = flag_raise(attempt=Attempt.objects.get(puzzle=p0, participant=people("ann")), reason="ambiguous")
    flag_dismiss(flag=dismissed, by=boss)
    flag_raise(attempt=Attempt.objects.get(puzzle=p1, participant=people("cat")), reason="ambiguous")
    flag_raise(attempt=first_p3, reason="broken")
    flag_raise(attempt=Attempt.objects.get(puzzle=p3, participant=people("bob")), reason="broken")
    puzzle_retire(puzzle=p3, by=boss, note="dice cut off")
    changed = puzzle_correct_truth(puzzle=p2, truth={**p2.truth, "sum": p2.truth["sum"] + 1}, by=boss, note="recount")
    assert changed == 6  # ann, bob, cat, dan, eve and the excluded gus: every submitted attempt is scored again

    run_a = AgentRun.objects.create(name="run A", model="m", rollouts_per_puzzle=3)
    plan = {p0: [True, True, True], p1: [False, True, False], p2: [None, False, False, False], p3: [True, False, True]}
    for puzzle, outcomes in plan.items():
        for index, correct in enumerate(outcomes):
            status = Rollout.Status.FAILED if correct is None else Rollout.Status.DONE
            Rollout.objects.create(
                run=run_a, puzzle=puzzle, index=index, status=status, submitted=True, correct=bool(correct)
            )
    run_b = AgentRun.objects.create(name="run B", model="m", rollouts_per_puzzle=1)
    Rollout.objects.create(run=run_b, puzzle=p0, index=0, status=Rollout.Status.DONE, submitted=True, correct=True)
    Rollout.objects.create(run=run_b, puzzle=p1, index=0, status=Rollout.Status.PENDING)
    return {"puzzles": (p0, p1, p2, p3), "study": study}


def export(tmp_path, fmt="jsonl", *extra) -> tuple[list[dict], dict]:
    out = tmp_path / f"labels.{fmt}"
    call_command(
        "labels",
        "export",
        "--dataset",
        "generated:41",
        "--split",
        "test",
        "--out",
        str(out),
        *extra,
        stdout=io.StringIO(),
    )
    meta = json.loads((tmp_path / f"labels.{fmt}.rules.json").read_text())
    if fmt == "jsonl":
        return [json.loads(line) for line in out.read_text().splitlines()], meta
    if fmt == "parquet":
        return [], meta
    with out.open(newline="") as stream:
        return list(csv.DictReader(stream)), meta


def test_labels_match_the_counts_worked_out_by_hand(built, tmp_path):
    rows, meta = export(tmp_path)
    p0, p1, p2, p3 = built["puzzles"]
    by = {row["puzzle"]: row for row in rows}
    assert [r["puzzle"] for r in rows] == [p.uid for p in (p0, p1, p2, p3)]
    easy, consensus, corrected, retired = (by[p.uid] for p in (p0, p1, p2, p3))

    assert (easy["human_started"], easy["human_answers"], easy["human_correct"], easy["no_input"]) == (6, 5, 5, 1)
    assert easy["solve_rate"] == 1.0 and easy["solve_ci_high"] == 1.0
    assert easy["solve_ci_low"] == pytest.approx(0.5655, abs=1e-4)  # Wilson 5/5
    assert easy["wrong_top_answer"] is None and easy["wrong_top_count"] == 0 and easy["wrong_top_share"] == 0.0
    assert easy["flags"]["ambiguous"] == 1 and easy["open_flags"] == 0 and easy["review"] == "dismissed"
    assert [e["action"] for e in easy["review_audit"]] == ["flag_dismissed"]
    assert easy["difficulty"] == "easy" and easy["valid"] and not easy["suspect"] and not easy["mining"]
    assert [(a["run"], a["rollouts"], a["correct"], a["difficulty"], a["mining"]) for a in easy["agents"]] == [
        ("run A", 3, 3, "easy", False),
        ("run B", 1, 1, "easy", False),
    ]

    assert (consensus["human_answers"], consensus["human_correct"], consensus["wrong_answers"]) == (5, 2, 3)
    assert consensus["solve_rate"] == 0.4
    assert consensus["solve_ci_low"] == pytest.approx(0.1176, abs=1e-4)
    assert consensus["solve_ci_high"] == pytest.approx(0.7693, abs=1e-4)
    assert str(consensus["wrong_top_answer"]) == str(p1.truth["sum"] + 1)
    assert (consensus["wrong_top_count"], consensus["wrong_top_share"]) == (3, 0.6)
    assert consensus["suspect"] and consensus["suspect_reasons"] == ["consensus"]
    assert not consensus["valid"] and consensus["invalid_reasons"] == ["suspect"]
    assert consensus["open_flags"] == 1 and consensus["review"] == "open" and consensus["difficulty"] == "hard"
    run_a, run_b = consensus["agents"]
    assert (run_a["rollouts"], run_a["correct"], run_a["mining"], run_a["difficulty"]) == (3, 1, True, "hard")
    assert (run_b["rollouts"], run_b["complete"], run_b["mining"]) == (0, False, None)  # pending: not counted
    assert consensus["mining"] and consensus["mining_runs"] == ["run A"]

    assert (corrected["human_answers"], corrected["human_correct"], corrected["solve_rate"]) == (5, 4, 0.8)
    # ann's: the old truth (p2 is the object from before the correction), wrong since
    assert str(corrected["wrong_top_answer"]) == str(p2.truth["sum"])
    assert (corrected["wrong_top_count"], corrected["wrong_top_share"]) == (1, 0.2)
    assert corrected["review"] == "truth_corrected" and not corrected["suspect"] and corrected["valid"]
    (entry,) = corrected["review_audit"]
    assert entry["action"] == "truth_corrected" and entry["by"] == "boss"
    assert entry["details"]["attempts_changed"] == 6 and entry["details"]["note"] == "recount"
    assert "old_truth" not in entry["details"] and "new_truth" not in entry["details"]
    assert AuditLog.objects.get(pk=entry["id"]).details["new_truth"]["sum"] == p2.truth["sum"] + 1  # in the log
    assert corrected["difficulty"] == "medium"
    (agent,) = corrected["agents"]
    assert (agent["rollouts"], agent["correct"], agent["failed"], agent["mining"]) == (3, 0, 1, False)

    assert retired["status"] == "retired" and retired["review"] == "retired" and not retired["valid"]
    assert retired["invalid_reasons"] == ["retired"] and not retired["suspect"]
    assert retired["flags"]["broken"] == 2 and retired["open_flags"] == 0
    assert retired["review_audit"][0]["details"]["flags_resolved"] == 2
    assert (retired["human_answers"], retired["difficulty"]) == (2, "unknown")  # under 3 answers
    assert retired["mining"]  # 2 of 3: mining, though not valid; curation takes both

    # ARC-AGI-2's rule: fay (no input) never tried p0, gus is excluded; p3 stays solvable though retired
    four = (easy, consensus, corrected, retired)
    solved = [(r["people_solved"], r["people_tried"], r["people_solvable"]) for r in four]
    assert solved == [(5, 5, True), (2, 5, True), (4, 5, True), (2, 2, True)]
    assert meta["solvable_rule"]["spec"] == "2:2" and meta["counts"]["people_solvable"] == 4
    assert all(r["chance_rate"] == 1 / 34 for r in rows)  # a sum of 3 to 36 typed blind
    assert "1 over their count" in meta["chance_rules"]["Dice_Count"]

    assert meta["counts"]["valid"] == 2 and meta["counts"]["suspect"] == 1
    assert meta["counts"]["mining"] == 2 and meta["counts"]["mining_and_valid"] == 0
    assert "suspect: not retired, and at least one of" in meta["rules"]
    assert [r["run"] for r in meta["runs"]] == ["run A", "run B"]


def test_csv_spreads_flags_and_runs_into_columns(built, tmp_path):
    rows, meta = export(tmp_path, "csv")
    p0, p1, _, _ = built["puzzles"]
    by = {row["puzzle"]: row for row in rows}
    assert by[p0.uid]["flags_ambiguous"] == "1" and by[p0.uid]["agent:run B:correct"] == "1"
    assert by[p1.uid]["agent:run A:mining"] == "True" and by[p1.uid]["suspect_reasons"] == "consensus"
    assert by[p1.uid]["agent:run B:rollouts"] == "0"
    assert json.loads(by[p1.uid]["wrong_top_answer"]) == str(p1.truth["sum"] + 1)  # the typed text, as JSON
    assert meta["format"] == "csv"


def test_a_study_filter_and_unknown_names(built, tmp_path):
    other = Study.objects.create(name="Other", split="test", puzzles_per_annotator=1)
    rows, _ = export(tmp_path, "jsonl", "--study", str(other.pk))
    assert all(r["human_started"] == 0 and r["difficulty"] == "unknown" for r in rows)
    rows, meta = export(tmp_path, "jsonl", "--solvable-rule", "3:1")
    assert [r["people_solvable"] for r in rows] == [True, False, True, False]  # 5, 2, 4 and 2 people
    assert meta["solvable_rule"]["rule"] == "solved by at least 3 people within 1 attempts each"
    with pytest.raises(CommandError, match="write PEOPLE:ATTEMPTS"):
        export(tmp_path, "jsonl", "--solvable-rule", "two")
    with pytest.raises(CommandError, match="no puzzles in dataset"):
        call_command("labels", "export", "--dataset", "nope", "--split", "test", "--out", str(tmp_path / "x.jsonl"))


def test_parquet_is_written_when_pyarrow_is_there_and_refused_with_a_reason_otherwise(built, tmp_path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        with pytest.raises(CommandError, match="parquet needs pyarrow"):
            export(tmp_path, "parquet")
        return
    export(tmp_path, "parquet")
    table = pq.read_table(tmp_path / "labels.parquet")
    assert table.num_rows == 4 and "agent:run A:mining" in table.column_names
    assert b"arena_labels" in table.schema.metadata


def test_the_staff_page_filters_by_label(built):
    p0, p1, p2, p3 = built["puzzles"]
    staff = Client()
    staff.force_login(get_user_model().objects.get(username="boss"))
    url = "/datasets/labels/?dataset=generated:41&split=test"
    page = staff.get(url).content.decode()
    assert all(p.uid in page for p in (p0, p1, p2, p3))
    only = staff.get(url + "&suspect=yes").content.decode()
    assert p1.uid in only and p0.uid not in only and p2.uid not in only
    mining_valid = staff.get(url + "&mining=yes&valid=yes").content.decode()
    assert not any(p.uid in mining_valid for p in (p0, p1, p2, p3))
    review = staff.get(url + "&review=truth_corrected").content.decode()
    assert p2.uid in review and p1.uid not in review
    person = Client()
    person.force_login(get_user_model().objects.get(username="ann"))
    assert person.get(url).status_code == 302  # staff only
    assert Flag.objects.filter(status="open").count() == 1  # the page changed nothing
