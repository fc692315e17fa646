"""The per-participant CSV: crowd ids of every kind, status, times, accuracy with time-outs apart,
gold, quality marks, completion; rounded numbers; the staff download and the command."""

import csv
import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.live.attempts import participant_for_user
from annotation.models import Attempt, Enrollment, Event, Flag, Slot
from annotation.studies import access, quality
from annotation.studies.exports import participants_csv
from annotation.studies.setup import study_create
from puzzles.models import Puzzle

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
COLUMNS = [
    "enrollment",
    "name",
    "crowd_id",
    "PROLIFIC_PID",
    "STUDY_ID",
    "SESSION_ID",
    "workerId",
    "assignmentId",
    "hitId",
    "ref",  # a kind the site does not know, found in an enrolment's ids
    "status",
    "excluded_reason",
    "joined_at",
    "consented_at",
    "last_seen_at",
    "finished_at",
    "puzzles_done",
    "puzzles_total",
    "completion",
    "attempts",
    "correct",
    "wrong",
    "timed_out",
    "not_submitted",
    "accuracy",
    "puzzles_solved",
    "gold_answered",
    "gold_correct",
    "gold_accuracy",
    "marks_fast",
    "marks_hidden",
    "marks_tabs",
    "marks_no_input",
    "marked_attempts",
    "gold_no_input",
    "practice_no_input",
    "flags",
    "active_minutes",
    "median_active_s",
]


def application_sources() -> dict[str, str]:
    """annotation/'s modules by path (migrations apart: they keep the names of their day)."""
    return {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "annotation").glob("**/*.py"))
        if "migrations" not in path.parts
    }


def test_the_crowd_id_kinds_are_named_only_where_the_invite_link_reads_them():
    """The export lives with the participants and reads access.CROWD_IDS; reporting once held a
    copy of the list (kept equal by a test)."""
    session_ids = [kind for kind in access.CROWD_IDS if kind not in access.PERSON_IDS]
    copies = [
        f"{path}: {kind}"
        for path, source in application_sources().items()
        if path != "annotation/studies/access.py"
        for kind in session_ids
        if f'"{kind}"' in source
    ]
    assert not copies, copies


def test_the_marks_are_listed_only_by_quality_control():
    listed = "(" + ", ".join(f'"{mark}"' for mark in quality.MARKS) + ")"
    copies = [path for path, source in application_sources().items() if listed in source]
    assert copies == ["annotation/studies/quality.py"]


def enrol(study, name, ids=None, **fields):
    participant = participant_for_user(user=get_user_model().objects.create_user(username=name))
    enrollment = Enrollment.objects.create(
        study=study, participant=participant, external_ids=ids or {}, crowd_id=access.person_id(ids or {}), **fields
    )
    Enrollment.objects.filter(pk=enrollment.pk).update(joined_at=T0)
    enrollment.refresh_from_db()
    return enrollment


def attempt(enrollment, puzzle, correct, *, after_s=10.0, at=0, purpose=Attempt.Purpose.SCORED, active_s=None):
    served = T0 + timedelta(minutes=at)
    made = Attempt.objects.create(
        participant=enrollment.participant,
        puzzle=puzzle,
        study=enrollment.study,
        purpose=purpose,
        served_at=served,
        submitted_at=None if after_s is None else served + timedelta(seconds=after_s),
        correct=None if after_s is None else correct,
        input_ok=None if after_s is None else True,
        wall_ms=None if after_s is None else after_s * 1000,
        active_ms=None if after_s is None else (active_s or after_s) * 1000,
    )
    Attempt.objects.filter(pk=made.pk).update(created_at=served)
    return made


@pytest.fixture
def study(verified):
    verified(types=("Dice_Count", "Object_Match"), per_type=3)
    gold = Puzzle.objects.filter(dataset="generated:5", type="Object_Match").order_by("index").last()
    return study_create(name="Payout", split="test", puzzles_per_annotator=3, overlap=1, time_limit_s=60, gold=[gold])


@pytest.fixture
def people(study):
    pool = list(Puzzle.objects.filter(slots__study=study).order_by("type", "index"))
    gold = study.gold.get()
    prolific = enrol(
        study,
        "guest-p",
        {"PROLIFIC_PID": "5f1e2d3c4b5a697887766554", "STUDY_ID": "st1", "SESSION_ID": "se1"},
        consented_at=T0,
        finished_at=T0 + timedelta(minutes=30),
    )
    mturk = enrol(study, "guest-m", {"workerId": "A1B2C3D4E5", "assignmentId": "as1", "hitId": "h1"}, consented_at=T0)
    hostile = enrol(
        study,
        "guest-x",
        {"PROLIFIC_PID": '=HYPERLINK("http://x.test","pay")', "ref": "abc"},
        consented_at=T0,
        excluded=True,
        excluded_reason="too fast",
    )
    joined = enrol(study, "guest-j")
    # prolific: right; wrong at 10 s; not right at 59 s of 60 (timed out); gold right. All done.
    attempt(prolific, pool[0], True, at=1)
    p2 = attempt(prolific, pool[1], False, at=2)
    p3 = attempt(prolific, pool[2], False, after_s=59, at=3)
    attempt(prolific, gold, True, at=4, purpose=Attempt.Purpose.GOLD)
    # mturk: right; one started and never submitted; gold wrong.
    attempt(mturk, pool[3], True, at=5, active_s=0.3)
    attempt(mturk, pool[4], None, after_s=None, at=6)
    attempt(mturk, gold, False, at=7, purpose=Attempt.Purpose.GOLD)
    slots = list(Slot.objects.filter(study=study).order_by("rank"))
    for slot, enrollment in zip(slots, [prolific, prolific, prolific, mturk]):
        Slot.objects.filter(pk=slot.pk).update(enrollment=enrollment, done=True)
    Flag.objects.create(puzzle=pool[1], attempt=p2, participant=prolific.participant, reason=Flag.Reason.AMBIGUOUS)
    last = T0 + timedelta(minutes=41, seconds=7)  # the last event received from prolific's page
    Event.objects.create(attempt=p3, seq=1, index=0, kind="beat", t=0.0, received=last.timestamp() * 1000)
    return {"prolific": prolific, "mturk": mturk, "hostile": hostile, "joined": joined, "marked": (p2, p3)}


def rows_of(text: str) -> tuple[list[str], dict[str, dict]]:
    reader = csv.DictReader(io.StringIO(text))
    return reader.fieldnames, {row["name"]: row for row in reader}


def test_one_row_per_participant_with_every_crowd_id_status_times_and_counts(study, people):
    p2, p3 = people["marked"]
    marks = {p2.pk: ["fast"], p3.pk: ["fast", "hidden"]}
    columns, rows = rows_of(participants_csv(study=study, marks=marks))
    assert columns == COLUMNS
    assert list(rows) == ["guest-p", "guest-m", "guest-x", "guest-j"]  # everyone, by join time
    p = rows["guest-p"]
    assert (p["crowd_id"], p["PROLIFIC_PID"], p["STUDY_ID"], p["SESSION_ID"]) == (
        "5f1e2d3c4b5a697887766554",
        "5f1e2d3c4b5a697887766554",
        "st1",
        "se1",
    )
    assert p["workerId"] == p["assignmentId"] == p["hitId"] == p["ref"] == ""
    assert p["status"] == "finished" and p["enrollment"] == str(people["prolific"].pk)
    assert p["joined_at"] == "2026-12-01T09:00:00Z" and p["finished_at"] == "2026-12-01T09:30:00Z"
    assert p["last_seen_at"] == "2026-12-01T09:41:07Z"  # the last event, later than any submit
    # 3 scored attempts: 1 right, 1 wrong, 1 timed out; accuracy 1/3; gold 1 of 1; 3 places + 1 gold of 4.
    assert (p["attempts"], p["correct"], p["wrong"], p["timed_out"], p["not_submitted"]) == ("3", "1", "1", "1", "0")
    assert p["accuracy"] == "0.3333" and p["puzzles_solved"] == "1"
    assert (p["gold_answered"], p["gold_correct"], p["gold_accuracy"]) == ("1", "1", "1")
    assert (p["puzzles_done"], p["puzzles_total"], p["completion"]) == ("4", "4", "1")
    assert (p["marks_fast"], p["marks_hidden"], p["marks_tabs"], p["marks_no_input"]) == ("2", "1", "0", "0")
    assert p["marked_attempts"] == "2" and p["flags"] == "1"
    # Active: 10 + 10 + 59 s scored, 10 s gold = 89 s = 1.48 min -> 1.5; median of scored 10 s.
    assert p["active_minutes"] == "1.5" and p["median_active_s"] == "10"

    m = rows["guest-m"]
    assert (m["crowd_id"], m["workerId"], m["assignmentId"], m["hitId"]) == ("A1B2C3D4E5", "A1B2C3D4E5", "as1", "h1")
    assert m["PROLIFIC_PID"] == "" and m["status"] == "working" and m["finished_at"] == ""
    assert (m["attempts"], m["correct"], m["not_submitted"], m["accuracy"]) == ("1", "1", "1", "1")
    assert (m["gold_answered"], m["gold_correct"], m["gold_accuracy"]) == ("1", "0", "0")
    assert (m["puzzles_done"], m["completion"]) == ("2", "0.5")
    assert m["median_active_s"] == "0.3" and m["last_seen_at"] == "2026-12-01T09:07:10Z"  # the gold submit

    x = rows["guest-x"]
    assert x["status"] == "excluded" and x["excluded_reason"] == "too fast"
    assert x["PROLIFIC_PID"] == x["crowd_id"] == '\'=HYPERLINK("http://x.test","pay")'  # never a formula
    assert x["ref"] == "abc"
    assert x["attempts"] == "0" and x["accuracy"] == "" and x["gold_accuracy"] == "" and x["median_active_s"] == ""
    assert x["last_seen_at"] == "2026-12-01T09:00:00Z"
    assert rows["guest-j"]["status"] == "joined" and rows["guest-j"]["consented_at"] == ""


def test_numbers_are_rounded(study, people):
    text = participants_csv(study=study, marks={})
    cells = [cell for line in csv.reader(io.StringIO(text)) for cell in line[COLUMNS.index("completion") :]]
    decimals = [len(cell.split(".")[1]) for cell in cells if cell.replace(".", "", 1).isdigit() and "." in cell]
    assert decimals and max(decimals) <= 4


def test_staff_download_it_with_the_quality_marks_and_others_cannot(study, people, staff):
    url = reverse("annotation:study-participants", args=[study.pk])
    assert url == f"/studies/{study.pk}/participants.csv"
    visitor = Client()
    visitor.force_login(get_user_model().objects.create_user("nosy"))
    assert visitor.get(url).status_code == 302  # to the staff sign-in
    response = staff.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="study-{study.pk}-participants.csv"'
    assert "no-store" in response["Cache-Control"]
    _, rows = rows_of(response.content.decode())
    # The real marks (annotation.studies.quality.attempt_marks): mturk's 0.3 s answer is fast.
    assert rows["guest-m"]["marks_fast"] == "1" and rows["guest-p"]["marks_fast"] == "0"
    assert staff.get(reverse("annotation:study-participants", args=[study.pk + 999])).status_code == 404


def test_the_participants_command_writes_the_csv(study, people, tmp_path):
    out = tmp_path / "participants.csv"
    call_command("participants", "--study", "Payout", "--out", str(out), stdout=io.StringIO())
    columns, rows = rows_of(out.read_text())
    assert columns == COLUMNS and len(rows) == 4
    printed = io.StringIO()
    call_command("participants", "--study", str(study.pk), stdout=printed)
    assert printed.getvalue() == out.read_bytes().decode()
