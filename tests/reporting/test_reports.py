"""Reports: their numbers against an independent count from the stored attempts."""

import io
import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.agents.outputs import agent_run_import
from annotation.models import Attempt, Enrollment
from annotation.reporting.reports import study_report
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db
TYPES = ("Dice_Count", "Object_Match")


@pytest.fixture
def study(verified):
    verified(types=TYPES, per_type=3)
    return study_create(name="Pilot", split="test", puzzles_per_annotator=6, overlap=3)


def run_annotators(study, person, plans: dict[str, list[bool]]):
    """Each annotator answers their queue right or wrong as planned."""
    for name, plan in plans.items():
        user, _ = person(name)
        enrollment = enrollment_join(study=study, user=user, external_ids={})
        enrollment_consent(enrollment=enrollment)
        for correct in plan:
            submit_answer(enrollment_next(enrollment=enrollment).attempt, correct, wall_ms=1000 + 100 * len(plan))


def independent_pass1(study) -> dict[str, tuple[int, int]]:
    counts = defaultdict(lambda: [0, 0])
    for attempt in Attempt.objects.filter(study=study, submitted_at__isnull=False).select_related("puzzle"):
        if Enrollment.objects.get(study=study, participant=attempt.participant).excluded:
            continue
        if attempt.puzzle.status == Puzzle.Status.RETIRED:
            continue
        counts[attempt.puzzle.type][0] += attempt.correct
        counts[attempt.puzzle.type][1] += 1
    return {t: tuple(c) for t, c in counts.items()}


def test_the_report_equals_an_independent_count(study, person):
    run_annotators(
        study,
        person,
        {
            "a": [True, True, False, True, True, True],
            "b": [True, False, False, True, True, False],
            "c": [True, True, True, True, True, True],
        },
    )
    report = study_report(study=study)
    counted = independent_pass1(study)
    assert {r["type"]: (r["correct"], r["attempts"]) for r in report["types"]} == counted
    for row in report["types"]:
        assert row["pass1"] == pytest.approx(row["correct"] / row["attempts"])
        # Clustered by annotator: with 3 annotators, from the lowest one's Pass@1 to the highest's.
        assert row["ci_low"] <= row["pass1"] <= row["ci_high"]
        assert row["wilson_low"] < row["pass1"] <= row["wilson_high"]
        assert row["submission_rate"] == 1.0 and row["puzzles"] == 3
        assert row["wall_median_ms"] == pytest.approx(1600, abs=50)
    means = [c / n for c, n in counted.values()]
    assert report["overall"]["mean_pass1_over_types"] == pytest.approx(sum(means) / len(means))
    assert report["annotators"] == 3
    assert report["agreement"]["fleiss_n"] == 6 and report["agreement"]["alpha_n"] == 6


def test_excluded_annotators_and_retired_puzzles_are_left_out(study, person):
    run_annotators(study, person, {"a": [True] * 6, "b": [False] * 6})
    Enrollment.objects.filter(participant__user__username="b").update(excluded=True, excluded_reason="too fast")
    retired = Puzzle.objects.filter(type="Dice_Count").first()
    Puzzle.objects.filter(pk=retired.pk).update(status=Puzzle.Status.RETIRED)
    report = study_report(study=study)
    assert {r["type"]: (r["correct"], r["attempts"]) for r in report["types"]} == independent_pass1(study)
    assert report["excluded_annotators"] == 1 and report["retired_puzzles"] == 1
    assert report["overall"]["pass1_pooled"] == 1.0


def write_summary(root: Path, puzzle_id: str, rollout: int | None, correct: bool):
    folder = root / "Geometry" / puzzle_id / (f"rollout_{rollout}" if rollout is not None else "")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").write_text(json.dumps({"correct": correct, "model": "agent-x"}))


def test_imported_agent_outputs_give_the_hand_computed_pass_at_1_and_5(study, tmp_path):
    puzzles = list(Puzzle.objects.filter(split="test").order_by("type", "index")[:3])
    plans = [[True, False, False, False, False], [True, True, True, False, True], [False] * 5]
    for puzzle, plan in zip(puzzles, plans):
        for n, correct in enumerate(plan):
            write_summary(tmp_path, puzzle.uid, n, correct)
    write_summary(tmp_path, "no-such-puzzle", None, True)
    (tmp_path / "Geometry" / "broken").mkdir()
    (tmp_path / "Geometry" / "broken" / "summary.json").write_text("{not json")
    result = agent_run_import(path=tmp_path, name="agent-x run 1")
    assert result.matched == 3 and result.unmatched == ["no-such-puzzle"] and len(result.problems) == 1
    agent = next(a for a in study_report(study=study)["agents"] if a["name"] == "agent-x run 1")
    # By hand: Pass@1 = mean of c/n = (1/5 + 4/5 + 0) / 3; Pass@5 = (1 + 1 + 0) / 3.
    assert agent["pass_at"]["1"] == pytest.approx((0.2 + 0.8 + 0) / 3)
    assert agent["pass_at"]["5"] == pytest.approx(2 / 3)
    assert agent["rollouts_per_puzzle"] == 5 and math.isclose(sum(r["puzzles"] for r in agent["types"]), 3)


def test_the_report_command_writes_json(study, person, tmp_path):
    run_annotators(study, person, {"a": [True, False, True, True, True, True]})
    out = tmp_path / "report.json"
    call_command("report", "--study", "Pilot", "--format", "json", "--out", str(out), stdout=io.StringIO())
    data = json.loads(out.read_text())
    assert data["study"]["name"] == "Pilot" and sum(r["attempts"] for r in data["types"]) == 6
    assert "first attempt" in data["rules"]
