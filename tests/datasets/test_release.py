"""A release of a study (annotation/datasets/release.py): simulated people answering through the real
intake, with crowd ids, flag notes, an exclusion and typed free text; the folder read back with
pyarrow and csv (no code of ours), searched byte for byte for what must not leave, and its Pass@1
per type held against the study's report."""

import csv
import hashlib
import io
import json
from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.datasets.release import ReleaseOptions, pseudonym, pseudonym_key, release_build
from annotation.live.attempts import participant_for_user
from annotation.models import Attempt, Enrollment, Flag
from annotation.reporting.reports import study_report
from annotation.review.labels import flag_raise
from annotation.studies.quality import enrollment_exclude
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from puzzles.services import bank_generate
from tests.live_stream import submit_answer

from .conftest import People

pytestmark = pytest.mark.django_db

CROWD = {"ann": "5f9a1c2b3d4e5f60718293a4", "bob": "60b7c8d9e0f1a2b3c4d5e6f7", "cat": "61c8d9e0f1a2b3c4d5e6f708"}
SECRETS = {
    "flag note": "the dice overlap, says ann-note-7731",
    "exclusion reason": "clicked through, saw it on the recording 4421",
    "typed text": "my prolific id is QX-typed-9981",
    "consent text": "You agree to consent-text-5512.",
    "session id": "SESSION-8c7b6a59",
    "study id": "STUDY-77aa88bb",
}


class CrowdPeople(People):
    """People who joined from a crowd platform: each enrolment keeps the crowd ids."""

    def __call__(self, name: str):
        if name not in self.by_name:
            user = get_user_model().objects.create_user(username=f"guest-{name}", password="pw")
            participant = participant_for_user(user=user)
            ids = {"PROLIFIC_PID": CROWD[name], "STUDY_ID": SECRETS["study id"], "SESSION_ID": SECRETS["session id"]}
            Enrollment.objects.create(study=self.study, participant=participant, crowd_id=CROWD[name], external_ids=ids)
            self.by_name[name] = participant
        return self.by_name[name]


@pytest.fixture
def released(tmp_path):
    """Dice_Count and Object_Match, 2 puzzles each; ann, bob and cat answer all four (cat is then
    excluded); ann flags one with a note; bob types free text on one, his second attempt there."""
    bank_generate(split="test", per_type=2, types=["Dice_Count", "Object_Match"], bank_seed=41, workers=1)
    Puzzle.objects.filter(dataset="generated:41").update(status=Puzzle.Status.VERIFIED)
    study = study_create(
        name="Release pilot",
        split="test",
        puzzles_per_annotator=4,
        overlap=3,
        consent_text=SECRETS["consent text"],
        duration_minutes=15,
    )
    people = CrowdPeople(study)
    puzzles = list(Puzzle.objects.filter(dataset="generated:41").order_by("type", "index"))
    an_hour_ago = timezone.now() - timedelta(hours=1)
    plan = {"ann": [True, True, True, False], "bob": [True, False, True, True], "cat": [False, False, True, True]}
    for name, verdicts in plan.items():
        for place, (puzzle, correct) in enumerate(zip(puzzles, verdicts), start=1):
            attempt = Attempt.objects.create(participant=people(name), puzzle=puzzle, study=study, position=place)
            submit_answer(attempt, correct)
            shown = an_hour_ago + timedelta(minutes=place)  # each person's run in order, as it happens
            Attempt.objects.filter(pk=attempt.pk).update(created_at=shown, served_at=shown)
    flag_raise(
        attempt=Attempt.objects.get(participant=people("ann"), position=1),
        reason="ambiguous",
        note=SECRETS["flag note"],
    )
    people.answer_without_input("bob", puzzles[0], SECRETS["typed text"])
    boss = get_user_model().objects.create_user("boss", is_staff=True)
    enrollment = study.enrollments.get(participant=people("cat"))
    enrollment_exclude(enrollment=enrollment, by=boss, reason=SECRETS["exclusion reason"])
    out = tmp_path / "release"
    release = release_build(studies=[study], out=out)
    return {"study": study, "out": out, "release": release, "puzzles": puzzles, "people": people}


def read_table(out, name):
    rows = pq.read_table(out / f"{name}.parquet").to_pylist()
    with (out / f"{name}.csv").open(encoding="utf-8", newline="") as stream:
        return rows, list(csv.DictReader(stream))


def test_the_release_holds_every_attempt_in_both_formats(released):
    out = released["out"]
    attempts, attempts_csv = read_table(out, "attempts")
    assert len(attempts) == len(attempts_csv) == 13 == released["release"].counts["attempts"]  # 12 + bob's retry
    by_person = {}
    for row in attempts:
        by_person.setdefault(row["participant"], []).append(row)
    assert len(by_person) == 3
    key = pseudonym_key()
    ann = by_person[pseudonym(key, crowd_id=CROWD["ann"], participant_id=0)]
    assert [r["correct"] for r in ann] == [True, True, True, False] and [r["place"] for r in ann] == [1, 2, 3, 4]
    assert all(r["submitted"] and "no_input" not in r["marks"] and not r["excluded"] for r in ann), ann
    assert ann[0]["answer"] == json.dumps(str(released["puzzles"][0].truth["sum"]))  # as typed, published layout
    cat = by_person[pseudonym(key, crowd_id=CROWD["cat"], participant_id=0)]
    assert all(r["excluded"] and r["excluded_why"] == "staff decision" for r in cat)
    bob = by_person[pseudonym(key, crowd_id=CROWD["bob"], participant_id=0)]
    retry = [r for r in bob if r["try"] == 2]
    assert len(retry) == 1 and retry[0]["answer"] is None and retry[0]["answer_withheld"]
    assert retry[0]["marks"] == "no_input"
    csv_row = attempts_csv[0]
    assert set(csv_row) == set(attempts[0]) and csv_row["participant"] == attempts[0]["participant"]

    puzzles, puzzles_csv = read_table(out, "puzzles")
    assert len(puzzles) == len(puzzles_csv) == 4
    first = {p["puzzle"]: p for p in puzzles}[released["puzzles"][0].uid]
    # ann and bob right (cat excluded): 2 of 2, people-solvable under ARC-AGI-2's rule
    assert (first["people_solved"], first["people_tried"], first["people_solvable"]) == (2, 2, True)
    assert first["flags"] == 1 and first["open_flags"] == 1 and first["review"] == "open"
    assert first["chance_rate"] == pytest.approx(1 / 34) and first["replay_verified"]

    sums = dict(line.split("  ")[::-1] for line in (out / "SHA256SUMS").read_text().splitlines())
    assert set(sums) == {p.name for p in out.iterdir()} - {"SHA256SUMS"}
    assert all(hashlib.sha256((out / name).read_bytes()).hexdigest() == digest for name, digest in sums.items())


def test_no_crowd_id_or_free_text_leaves(released):
    out = released["out"]
    forbidden = [*CROWD.values(), *SECRETS.values(), "guest-ann", "guest-bob", "boss", "127.0.0.1"]
    for path in out.iterdir():
        data = path.read_bytes()
        found = [text for text in forbidden if text.encode() in data]
        assert not found, f"{path.name} holds {found}"
    for name in ("attempts", "puzzles"):  # and inside Parquet's pages, whatever their compression
        values = json.dumps(pq.read_table(out / f"{name}.parquet").to_pylist(), default=str)
        assert not [text for text in forbidden if text in values]


def test_free_text_leaves_only_when_asked_by_name(released, tmp_path):
    out = tmp_path / "with-text"
    options = ReleaseOptions(with_text=frozenset({"flag_notes", "exclusion_reasons", "typed_text"}))
    release_build(studies=[released["study"]], out=out, options=options)
    attempts = (out / "attempts.csv").read_text()
    assert SECRETS["exclusion reason"] in attempts and SECRETS["typed text"] in attempts
    assert SECRETS["flag note"] in (out / "puzzles.csv").read_text()
    assert not any(crowd.encode() in path.read_bytes() for path in out.iterdir() for crowd in CROWD.values())
    # a second release of the same deployment names each person the same
    first = {r["participant"] for r in pq.read_table(released["out"] / "attempts.parquet").to_pylist()}
    again = {r["participant"] for r in pq.read_table(out / "attempts.parquet").to_pylist()}
    assert first == again


def test_pass1_per_type_and_intervals_are_the_report_s(released):
    meta = json.loads((released["out"] / "release.json").read_text())
    report = study_report(study=released["study"])
    (study,) = meta["studies"]
    fields = ("type", "pass1", "ci_low", "ci_high", "ci_method", "ci_people", "attempts", "puzzles", "annotators")
    assert study["types"] == [{name: row[name] for name in fields} for row in report["types"]]
    assert [t["pass1"] for t in study["types"]] == [0.75, 0.75]  # ann and bob: 3 of 4 on each type
    card = (released["out"] / "README.md").read_text()
    from annotation.reporting.wording import fmt_pass1

    for row in report["types"]:
        assert f"| {row['type']} | {fmt_pass1(row['pass1'], row['ci_low'], row['ci_high'])} |" in card
    assert meta["counts"]["people"] == 3 and meta["counts"]["people_excluded"] == 1
    assert meta["excluded_people_by_why"] == {"staff decision": 1}
    assert "about 15 min" in card and "1 over their count" in card


def test_the_command_and_its_refusals(released, tmp_path):
    out = io.StringIO()
    call_command("release", "build", "--study", "Release pilot", "--out", str(tmp_path / "cmd"), stdout=out)
    assert "13 attempts, 4 puzzles, 0 agent rows; read back and checked (8 files in SHA256SUMS)" in out.getvalue()
    with pytest.raises(CommandError, match="write PEOPLE:ATTEMPTS"):
        call_command(
            "release", "build", "--study", "Release pilot", "--out", str(tmp_path / "x"), "--solvable-rule", "2"
        )
    with pytest.raises(CommandError, match="no single study"):
        call_command("release", "build", "--study", "nope", "--out", str(tmp_path / "y"))
    assert Flag.objects.count() == 1  # building changed nothing
