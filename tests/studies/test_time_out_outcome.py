"""One outcome per time-out (issue 33): an answer the time limit ended is stored as "timed out" by
the scoring (live/scoring.py, TIMED_OUT), and quality control, the participants' export and the
report count the same attempts as timed out, the others as wrong or correct."""

import importlib
import time

import pytest
from django.apps import apps

from annotation.live.frames import Batch
from annotation.live.intake import events_append
from annotation.live.scoring import TIMED_OUT
from annotation.models import Attempt, Enrollment
from annotation.reporting.reports import study_report
from annotation.studies.exports import participant_rows
from annotation.studies.quality import annotator_attempts, attempt_marks
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from tests.live_stream import Hand, served_at, submit_answer

pytestmark = pytest.mark.django_db
LIMIT_S = 5


@pytest.fixture
def timed(verified, person):
    """The study (a 5 s limit) and make(name) -> that person's first puzzle in it."""
    verified(types=("Dice_Count",), per_type=4)
    study = study_create(name="timed", split="test", puzzles_per_annotator=1, overlap=4, time_limit_s=LIMIT_S)

    def make(name: str) -> Attempt:
        user, _ = person(name)
        enrollment = enrollment_join(study=study, user=user, external_ids={})
        enrollment_consent(enrollment=enrollment)
        return enrollment_next(enrollment=enrollment).attempt

    return study, make


def pages_own_submit(attempt: Attempt, *, after_ms: float) -> None:
    """The page's timer submits what is there at the limit: here nothing was entered."""
    now = time.time() * 1000
    served_at(attempt, now - after_ms - 100)
    hand = Hand(attempt.puzzle, now - after_ms).wait(after_ms)
    hand.log("act.submit")
    events_append(attempt_id=attempt.pk, batch=Batch(1, hand.events), received_ms=now)


def outcomes(study) -> dict[str, dict[str, str]]:
    """Per person: the stored reason's outcome, quality control's word, the export's and the report's count."""
    said: dict[str, dict[str, str]] = {}
    rows = {row["name"]: row for row in participant_rows(study=study, marks=attempt_marks(study=study))[1]}
    for enrollment in Enrollment.objects.filter(study=study).select_related("participant__user"):
        name = enrollment.participant.user.username
        (item,) = annotator_attempts(enrollment=enrollment)
        attempt = item["attempt"]
        stored = "timed out" if attempt.reason.startswith(TIMED_OUT) else "correct" if attempt.correct else "wrong"
        row = rows[name]
        exported = "timed out" if row["timed_out"] else "wrong" if row["wrong"] else "correct"
        said[name] = {"database": stored, "qc": item["state"], "export": exported}
    return said


def test_a_time_out_is_one_outcome_in_the_database_qc_the_export_and_the_report(timed):
    study, first_puzzle = timed
    submit_answer(first_puzzle("early"), False, wall_ms=3_000)  # wrong, well before the limit
    pages_own_submit(first_puzzle("blank"), after_ms=4_600)  # nothing entered: the page's submit at the limit
    submit_answer(first_puzzle("right"), True, wall_ms=4_600)  # right at the limit stays right
    submit_answer(first_puzzle("over"), True, wall_ms=8_000)  # right, but past the limit
    said = outcomes(study)
    expected = {"early": "wrong", "blank": "timed out", "right": "correct", "over": "timed out"}
    assert said == {name: dict.fromkeys(("database", "qc", "export"), word) for name, word in expected.items()}
    (row,) = study_report(study=study)["types"]
    assert (row["correct"], row["wrong"], row["timed_out"]) == (1, 1, 2)
    blank = Attempt.objects.get(participant__user__username="blank")
    assert blank.reason.startswith("timed out: submitted at 4.") and "the limit is 5 s" in blank.reason
    assert "malformed answer" in blank.reason  # what the verifier found stays said, after the outcome


def test_time_outs_scored_before_are_stored_as_one_outcome_too(timed):
    study, first_puzzle = timed
    pages_own_submit(first_puzzle("blank"), after_ms=4_600)
    submit_answer(first_puzzle("early"), False, wall_ms=3_000)
    blank = Attempt.objects.get(participant__user__username="blank")
    was = blank.reason.split("(the answer then: ", 1)[1].rstrip(")")
    Attempt.objects.filter(pk=blank.pk).update(reason=was)  # as scoring stored it before
    migration = importlib.import_module("annotation.migrations.0020_study_gold_screen_out_time_outs")
    migration.time_outs_as_one_outcome(apps, None)
    blank.refresh_from_db()
    assert blank.reason == f"timed out: submitted at the 5 s limit (the answer then: {was})"
    assert not Attempt.objects.get(participant__user__username="early").reason.startswith(TIMED_OUT)
    assert {name: said["database"] for name, said in outcomes(study).items()} == {
        "blank": "timed out",
        "early": "wrong",
    }
