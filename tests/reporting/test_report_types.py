"""The JSON report holds exactly the keys its TypedDicts declare (report_types.py), in their order:
a key the builder adds and the type lacks, or the reverse, fails here."""

import json
from pathlib import Path

import pytest

from annotation.agents.outputs import agent_run_import
from annotation.reporting.render import CSV_TYPE_COLUMNS, render
from annotation.reporting.report_types import (
    AgentSummary,
    AgentTypeRow,
    Agreement,
    Intervals,
    MotionRow,
    MotionSection,
    Overall,
    StudyFacts,
    StudyReport,
    TimeSample,
    TypeRow,
    Versus,
    VersusRow,
)
from annotation.reporting.reports import study_report
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db


def declared(shape: type) -> list[str]:
    """A TypedDict's keys in the order it declares them."""
    return list(shape.__annotations__)


@pytest.fixture
def report(verified, person, tmp_path: Path) -> dict:
    """The JSON report of two people with overlap 2 on two types, beside one imported agent run."""
    verified(types=("Dice_Count", "Object_Match"), per_type=2)
    study = study_create(name="Typed", split="test", puzzles_per_annotator=4, overlap=2)
    for name, plan in {"a": [True, False, True, True], "b": [True, True, False, True]}.items():
        enrollment = enrollment_join(study=study, user=person(name)[0], external_ids={})
        enrollment_consent(enrollment=enrollment)
        for correct in plan:
            submit_answer(enrollment_next(enrollment=enrollment).attempt, correct)
    for puzzle in Puzzle.objects.filter(split="test"):
        folder = tmp_path / "Geometry" / puzzle.uid / "rollout_0"
        folder.mkdir(parents=True)
        (folder / "summary.json").write_text(json.dumps({"correct": True, "model": "agent-x"}))
    agent_run_import(path=tmp_path, name="agent-x")
    return json.loads(render(study_report(study=study), "json"))


def test_every_section_of_the_json_report_has_the_keys_its_type_declares(report):
    assert list(report) == declared(StudyReport)
    assert list(report["study"]) == declared(StudyFacts)
    assert list(report["overall"]) == declared(Overall)
    assert list(report["intervals"]) == declared(Intervals)
    assert list(report["agreement"]) == declared(Agreement)
    assert list(report["motion"]) == declared(MotionSection)
    assert [list(row) for row in report["types"]] == [declared(TypeRow)] * 2
    assert [list(times) for times in report["times"].values()] == [declared(TimeSample)] * 2
    motion_rows = report["motion"]["rows"] + report["motion"]["overall"]
    assert motion_rows and all(list(row) == declared(MotionRow) for row in motion_rows)
    (agent,) = report["agents"]
    assert list(agent) == declared(AgentSummary)
    assert [list(row) for row in agent["types"]] == [declared(AgentTypeRow)] * 2
    (versus,) = report["versus"]
    assert list(versus) == declared(Versus)
    assert [list(row) for row in [*versus["rows"], versus["overall"]]] == [declared(VersusRow)] * 3


def test_the_per_type_csv_columns_are_fields_of_a_type_row():
    assert set(CSV_TYPE_COLUMNS) <= set(declared(TypeRow))
