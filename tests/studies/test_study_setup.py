"""Studies as staff run them (issue 14): per-type quotas drawn by seeded sampling, open / pause /
close, what a study needs and how far it is, the staff's study pages and form, quality control
(every crowd id, devices, stuck annotators, one annotator's answers drawn), and the review
page's own question and structured truth corrections."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db.models import Max
from django.test import Client
from django.utils import timezone

from annotation.models import AgentRun, Attempt, AuditLog, Enrollment, Event, Rollout, Study
from annotation.studies.access import AccessRefused, join_check
from annotation.studies.quality import (
    annotator_table,
    device_summary,
    enrollment_exclude,
    enrollment_include,
    is_stuck,
    stuck_count,
)
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import (
    Staffing,
    StudySetupError,
    completion_url,
    study_create,
    study_progress,
    study_set_status,
    study_update,
)
from puzzles.models import Puzzle
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db
TYPES = ("Dice_Count", "Bingo", "Object_Match")
PHONE = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Mobile Safari/537.36"
)


@pytest.fixture
def bank(verified):
    """Eight replay-verified puzzles of each of three types."""
    return verified(types=TYPES, per_type=8)


def pool_of(study) -> list[int]:
    return sorted(study.slots.values_list("puzzle_id", flat=True).distinct())


def types_of(study) -> dict[str, int]:
    found: dict[str, int] = {}
    for name in Puzzle.objects.filter(pk__in=pool_of(study)).values_list("type", flat=True):
        found[name] = found.get(name, 0) + 1
    return found


def annotator(study, person, name, **crowd):
    user, _ = person(name)
    enrollment = enrollment_join(study=study, user=user, external_ids=crowd, user_agent=PHONE)
    enrollment_consent(enrollment=enrollment)
    return enrollment


# --- quotas ---------------------------------------------------------------------------------------
def test_n_per_type_is_balanced_seeded_and_reproducible(bank):
    first = study_create(name="a", split="test", puzzles_per_annotator=3, per_type=3, seed=7)
    again = study_create(name="b", split="test", puzzles_per_annotator=3, per_type=3, seed=7)
    other = study_create(name="c", split="test", puzzles_per_annotator=3, per_type=3, seed=8)
    assert types_of(first) == dict.fromkeys(TYPES, 3)  # every type its share, not the first 9 by name
    assert first.quotas == dict.fromkeys(TYPES, 3)
    assert pool_of(first) == pool_of(again)  # the same set-up draws the same pool
    assert pool_of(first) != pool_of(other)  # another seed, another draw (C(8,3)^3 of them)
    # Not simply the first three of each type.
    first_three = Puzzle.objects.filter(index__lt=3, type__in=TYPES, dataset="generated:5")
    assert set(pool_of(first) + pool_of(other)) != set(first_three.values_list("pk", flat=True))


def test_a_types_draw_does_not_depend_on_the_other_types(bank):
    alone = study_create(name="a", split="test", puzzles_per_annotator=2, types=["Bingo"], per_type=2, seed=3)
    beside = study_create(name="b", split="test", puzzles_per_annotator=2, per_type=2, seed=3)
    bingo = set(Puzzle.objects.filter(type="Bingo").values_list("pk", flat=True))
    assert set(pool_of(alone)) == set(pool_of(beside)) & bingo


def test_quotas_per_type_override_n_and_zero_leaves_a_type_out(bank):
    study = study_create(
        name="q",
        split="test",
        puzzles_per_annotator=4,
        per_type=2,
        quotas={"Dice_Count": 5, "Object_Match": 0},
    )
    assert types_of(study) == {"Dice_Count": 5, "Bingo": 2}
    assert study.types == ["Bingo", "Dice_Count"] and study.quotas == {"Bingo": 2, "Dice_Count": 5}


def test_a_type_short_of_its_quota_is_named(bank):
    with pytest.raises(
        StudySetupError, match=r"too few .*Bingo has 8 \(asked 9\); Dice_Count has 8 \(asked 9\); Object_Match has 8"
    ):
        study_create(name="x", split="test", puzzles_per_annotator=1, per_type=9)
    with pytest.raises(StudySetupError, match=r"quota: Dice_Count has 8 \(asked 9\)$"):
        study_create(name="x", split="test", puzzles_per_annotator=1, per_type=2, quotas={"Dice_Count": 9})


def test_without_quotas_the_pool_is_every_verified_puzzle(bank):
    study = study_create(name="all", split="test", puzzles_per_annotator=1)
    assert types_of(study) == dict.fromkeys(TYPES, 8) and study.quotas == {}


def test_practice_and_gold_stay_out_of_the_pool_and_are_not_both(bank):
    dice = [p for p in bank if p.type == "Dice_Count"]
    study = study_create(
        name="s", split="test", puzzles_per_annotator=2, per_type=6, practice=[dice[0]], gold=[dice[1]]
    )
    assert types_of(study)["Dice_Count"] == 6  # the other six
    assert dice[0].pk not in pool_of(study) and dice[1].pk not in pool_of(study)
    with pytest.raises(StudySetupError, match="either practice or gold"):
        study_create(name="t", split="test", puzzles_per_annotator=1, practice=[dice[0]], gold=[dice[0]])


def test_what_a_study_needs_people_and_places():
    even = Staffing(pool=10, overlap=3, per_person=5)
    assert (even.places, even.people_needed, even.last_person_gets, even.advice()) == (30, 6, 0, None)
    uneven = Staffing(pool=11, overlap=2, per_person=4)
    assert (uneven.people_needed, uneven.last_person_gets) == (6, 2)
    assert "person 6 would find only 2" in uneven.advice()


def test_progress_can_be_complete_and_leaves_retired_puzzles_out(bank, person):
    study = study_create(name="small", split="test", types=["Dice_Count"], per_type=2, puzzles_per_annotator=2)
    enrollment = annotator(study, person, "ann")
    submit_answer(enrollment_next(enrollment=enrollment).attempt)
    progress = study_progress([study])[study.pk]
    assert (progress.places, progress.places_done, progress.people_needed, progress.complete) == (2, 1, 1, False)
    submit_answer(enrollment_next(enrollment=enrollment).attempt)
    assert enrollment_next(enrollment=enrollment).kind == "finished"
    progress = study_progress([study])[study.pk]
    assert (progress.places_done, progress.finished, progress.percent, progress.complete) == (2, 1, 100, True)
    Puzzle.objects.filter(pk=pool_of(study)[0]).update(status=Puzzle.Status.RETIRED)
    assert study_progress([study])[study.pk].places == 1


# --- open, pause, close -------------------------------------------------------------------------
def test_open_pause_close_refuse_new_work_and_are_logged(bank, person):
    boss = get_user_model().objects.create_user("boss", is_staff=True)
    study = study_create(
        name="s", split="test", types=["Dice_Count"], per_type=4, puzzles_per_annotator=2, status=Study.Status.DRAFT
    )
    assert not study.is_open
    with pytest.raises(AccessRefused, match="not started yet"):
        join_check(study=study, crowd={}, anonymous=False, client="1.2.3.4")
    study = study_set_status(study, Study.Status.OPEN, by=boss)
    assert study.is_open and study.accepts_work
    enrollment = annotator(study, person, "ann")
    submit_answer(enrollment_next(enrollment=enrollment).attempt)

    study = study_set_status(study, Study.Status.PAUSED, by=boss)
    assert study.is_open  # still watched on the dashboard
    paused = enrollment_next(enrollment=enrollment)
    assert (paused.kind, paused.attempt, paused.done) == ("paused", None, 1)
    with pytest.raises(AccessRefused, match="paused"):
        join_check(study=study, crowd={}, anonymous=False, client="1.2.3.4")

    study = study_set_status(study, Study.Status.OPEN, by=boss)
    step = enrollment_next(enrollment=enrollment)
    assert step.kind == "attempt"  # where they stopped
    study = study_set_status(study, Study.Status.CLOSED, by=boss)
    assert not study.is_open and enrollment_next(enrollment=enrollment).kind == "closed"
    with pytest.raises(AccessRefused, match="closed"):
        join_check(study=study, crowd={}, anonymous=False, client="1.2.3.4")
    with pytest.raises(StudySetupError, match="cannot become paused"):
        study_set_status(study, Study.Status.PAUSED, by=boss)
    log = list(AuditLog.objects.filter(study=study).order_by("at", "pk").values_list("details", flat=True))
    assert [(d["from"], d["to"]) for d in log] == [
        ("draft", "open"),
        ("open", "paused"),
        ("paused", "open"),
        ("open", "closed"),
    ]


def test_a_finished_annotator_keeps_the_code_when_the_study_closes(bank, person):
    study = study_create(name="s", split="test", types=["Dice_Count"], per_type=2, puzzles_per_annotator=1)
    enrollment = annotator(study, person, "ann", PROLIFIC_PID="p1")
    submit_answer(enrollment_next(enrollment=enrollment).attempt)
    study_set_status(study, Study.Status.CLOSED, by=None)
    assert enrollment_next(enrollment=enrollment).kind == "finished"
    assert completion_url(study, {"PROLIFIC_PID": "p1"}).endswith(f"cc={study.completion_code}")
    assert completion_url(study, {}) is None
    study.return_url = "https://example.org/done"
    assert completion_url(study, {}) == "https://example.org/done"


def test_the_annotators_pages_say_clearly_when_a_study_is_paused_or_closed(bank):
    study = study_create(name="Paused one", split="test", types=["Dice_Count"], per_type=2, puzzles_per_annotator=1)
    browser = Client()
    browser.post(f"/s/{study.token}/", HTTP_USER_AGENT=PHONE)
    assert Enrollment.objects.get(study=study).user_agent == PHONE
    study_set_status(study, Study.Status.PAUSED, by=None)
    page = browser.get(f"/s/{study.token}/next/").content.decode()
    assert "This study is paused" in page and "Everything you did is kept" in page
    newcomer = Client()
    assert "This study is paused" in newcomer.get(f"/s/{study.token}/").content.decode()
    refused = newcomer.post(f"/s/{study.token}/")
    assert refused.status_code == 403 and "paused" in refused.content.decode()
    assert Enrollment.objects.filter(study=study).count() == 1
    study_set_status(study, Study.Status.CLOSED, by=None)
    assert "This study is closed" in browser.get(f"/s/{study.token}/next/").content.decode()


def test_the_consent_page_shows_the_studys_own_words_and_declining_records_nothing(bank):
    study = study_create(
        name="Consent",
        split="test",
        types=["Dice_Count"],
        per_type=2,
        puzzles_per_annotator=1,
        researcher="Ada's lab",
        contact="ada@example.org",
        duration_minutes=12,
        consent_text="First paragraph.\n\nSecond   paragraph.",
        decline_url="https://app.prolific.com/submissions/complete?cc=NOCONSENT",
    )
    page = Client().get(f"/s/{study.token}/?PROLIFIC_PID=p9").content.decode()
    assert "Ada&#x27;s lab" in page and "mailto:ada@example.org" in page and "about 12 minutes" in page
    assert "<p>First paragraph.</p>" in page and "<p>Second paragraph.</p>" in page
    assert f"/s/{study.token}/decline/" in page and "Staff sign in" not in page
    declined = Client().get(f"/s/{study.token}/decline/").content.decode()
    assert "cc=NOCONSENT" in declined and "Nothing was recorded" in declined
    assert not Enrollment.objects.filter(study=study).exists()


# --- quality control ----------------------------------------------------------------------------
def test_stuck_is_enrolled_unfinished_and_no_answer_for_ten_minutes(bank, person, staff):
    study = study_create(name="s", split="test", types=["Dice_Count"], per_type=4, puzzles_per_annotator=2)
    slow = annotator(study, person, "slow")
    quick = annotator(study, person, "quick")
    submit_answer(enrollment_next(enrollment=quick).attempt)
    enrollment_next(enrollment=slow)  # shown a puzzle, never answered
    now = timezone.now()
    later = now + timedelta(minutes=11)
    assert not is_stuck(slow, last_answer=None, now=now + timedelta(minutes=9))
    assert is_stuck(slow, last_answer=None, now=later)
    rows = {r["name"]: r for r in annotator_table(study=study, now=later)}
    assert rows["slow"]["stuck"] and rows["slow"]["state"] == "stuck"
    assert rows["quick"]["stuck"]  # eleven minutes after their last answer too
    assert stuck_count(study=study, now=later) == 2  # the study page's count, without the table
    rows = {r["name"]: r for r in annotator_table(study=study, now=now + timedelta(minutes=5))}
    assert not rows["slow"]["stuck"] and not rows["quick"]["stuck"]
    assert stuck_count(study=study, now=now + timedelta(minutes=5)) == 0
    submit_answer(enrollment_next(enrollment=quick).attempt)
    assert enrollment_next(enrollment=quick).kind == "finished"
    assert stuck_count(study=study, now=later) == 1  # quick finished: slow alone
    enrollment_exclude(enrollment=slow, by=None, reason="never answered")
    assert stuck_count(study=study, now=later) == 0
    assert not any(r["stuck"] for r in annotator_table(study=study, now=later))
    enrollment_include(enrollment=slow, by=None)
    eleven_ago = timezone.now() - timedelta(minutes=11)  # the page counts by the clock: slow joined long ago
    Enrollment.objects.filter(pk=slow.pk).update(joined_at=eleven_ago, consented_at=eleven_ago)
    page = staff.get(f"/studies/{study.pk}/").content.decode()
    assert f'<a href="/studies/{study.pk}/annotators/" class="warning">1</a>' in page
    study_set_status(study, Study.Status.PAUSED, by=None)
    rows = {r["name"]: r for r in annotator_table(study=Study.objects.get(pk=study.pk), now=later)}
    assert rows["quick"]["state"] == "finished" and not rows["quick"]["stuck"]
    assert not rows["slow"]["stuck"]  # a paused study: nobody can move on
    assert stuck_count(study=Study.objects.get(pk=study.pk), now=later) == 0


def test_qc_shows_every_crowd_id_the_device_and_the_window(bank, person, staff):
    study = study_create(name="QC", split="test", types=["Dice_Count"], per_type=4, puzzles_per_annotator=2)
    mturk = annotator(study, person, "turker", workerId="A1TURKER", assignmentId="3ASSIGN", hitId="3HIT")
    prolific = annotator(study, person, "prolific", PROLIFIC_PID="5f00prolific", STUDY_ID="st", SESSION_ID="se")
    submit_answer(enrollment_next(enrollment=mturk).attempt)
    rows = {r["name"]: r for r in annotator_table(study=study)}
    assert rows["turker"]["crowd"] == [("workerId", "A1TURKER"), ("assignmentId", "3ASSIGN"), ("hitId", "3HIT")]
    assert rows["turker"]["viewport"] == {"w": 1280, "h": 1080, "scale": 1}  # the page's load event
    heard = Event.objects.filter(attempt__participant=mturk.participant).aggregate(last=Max("received"))["last"]
    assert rows["turker"]["last_seen"] == datetime.fromtimestamp(heard / 1000, tz=UTC)  # its page's newest event
    assert rows["turker"]["last_answer"] == Attempt.objects.get(participant=mturk.participant).submitted_at
    assert rows["prolific"]["last_seen"] == prolific.joined_at and rows["prolific"]["last_answer"] is None
    assert rows["turker"]["device"] == "Chrome 131 · Android · phone"
    assert rows["prolific"]["viewport"] is None
    page = staff.get(f"/studies/{study.pk}/annotators/").content.decode()
    for shown in ("A1TURKER", "3ASSIGN", "5f00prolific", "SESSION_ID", "Chrome 131 · Android · phone", "1280×1080"):
        assert shown in page, shown
    assert f"/studies/{study.pk}/annotators/{prolific.pk}/attempts/" in page


def test_device_summary_reads_common_browsers():
    assert device_summary(PHONE) == "Chrome 131 · Android · phone"
    iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Version/17.4 Mobile Safari"
    assert device_summary(iphone) == "Safari 17 · iOS · phone"
    firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
    assert device_summary(firefox) == "Firefox 128 · Windows"
    assert device_summary("") == ""


def test_one_annotators_attempts_are_drawn_on_their_puzzles(verified, person, staff):
    verified(types=("Geometry_Click",), per_type=2)
    study = study_create(name="Clicks", split="test", puzzles_per_annotator=1)
    enrollment = annotator(study, person, "clicker", workerId="W1")
    attempt = enrollment_next(enrollment=enrollment).attempt
    Attempt.objects.filter(pk=attempt.pk).update(answer=[123.5, 77.0], correct=False, submitted_at=timezone.now())
    page = staff.get(f"/studies/{study.pk}/annotators/{enrollment.pk}/attempts/").content.decode()
    assert 'cx="123.5" cy="77.0"' in page  # the answer, in the image's natural pixels
    assert attempt.puzzle.public["instruction"] in page and "W1" in page
    assert f"/review/{attempt.puzzle.uid}/" in page
    other = enrollment_join(
        study=study_create(name="Other", split="test", puzzles_per_annotator=1), user=person("x")[0], external_ids={}
    )
    assert staff.get(f"/studies/{study.pk}/annotators/{other.pk}/attempts/").status_code == 404


# --- the staff's pages --------------------------------------------------------------------------
def test_staff_pages_send_others_to_the_sites_sign_in_page(bank, person):
    study = study_create(name="s", split="test", puzzles_per_annotator=1)
    user, _ = person("ann")
    annotator_client = Client()
    annotator_client.force_login(user)
    for client in (Client(), annotator_client):
        for url in ("/studies/", f"/studies/{study.pk}/", f"/studies/{study.pk}/edit/", "/review/"):
            response = client.get(url)
            assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next="), url
    page = annotator_client.get("/accounts/login/?next=/studies/").content.decode()
    assert "signed in as an annotator" in page and "createsuperuser" in page
    assert Client().post(f"/studies/{study.pk}/status/", {"status": "closed"}).status_code == 302
    assert Study.objects.get(pk=study.pk).status == "open"


def test_reporting_and_agent_pages_send_others_to_the_sites_sign_in_page(bank, person, staff):
    study = study_create(name="s", split="test", puzzles_per_annotator=1)
    run = AgentRun.objects.create(name="r", model="m", protocol="openai-tools", puzzles=[bank[0].pk])
    rollout = Rollout.objects.create(run=run, puzzle=bank[0], index=0)
    needs_arguments = [
        f"/studies/{study.pk}/report.json",
        f"/studies/{study.pk}/events.jsonl",
        f"/studies/{study.pk}/participants.csv",
        f"/agents/runs/{run.pk}/",
        f"/agents/rollouts/{rollout.pk}/",
        f"/agents/rollouts/{rollout.pk}/screenshots/0.png",
    ]
    no_arguments = ["/dashboard/", "/agents/"]
    annotator_client = Client()
    annotator_client.force_login(person("ann")[0])
    for client in (Client(), annotator_client):
        for url in no_arguments + needs_arguments:
            response = client.get(url)
            assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}"), url
    for url in no_arguments:
        assert staff.get(url).status_code == 200, url


def test_staff_create_a_draft_with_quotas_and_picks_then_open_it(bank, staff):
    dice = [p for p in bank if p.type == "Dice_Count"]
    bingo = [p for p in bank if p.type == "Bingo"]
    form = {
        "name": "Quota study",
        "split": "test",
        "types": ["Dice_Count", "Bingo"],
        "per_type": 3,
        "quota_Bingo": 2,
        "puzzles_per_annotator": 5,
        "overlap": 2,
        "order": "interleaved",
        "seed": 4,
        "attempts_per_puzzle": 1,
        "practice": [dice[0].uid],
        "gold": [bingo[0].uid, ""],
        "completion_code": "C0DE2024",
        "researcher": "Ada",
        "contact": "ada@example.org",
        "duration_minutes": 10,
    }
    form_page = staff.get("/studies/new/").content.decode()
    assert 'name="quota_Bingo"' in form_page and f'value="{dice[0].uid}"' in form_page and "<img" in form_page
    created = staff.post("/studies/new/", form)
    study = Study.objects.get(name="Quota study")
    assert created["Location"] == f"/studies/{study.pk}/"
    assert study.status == "draft" and study.completion_code == "C0DE2024"
    assert types_of(study) == {"Dice_Count": 3, "Bingo": 2} and study.quotas == {"Bingo": 2, "Dice_Count": 3}
    assert list(study.practice.all()) == [dice[0]] and list(study.gold.all()) == [bingo[0]]
    page = staff.get(created["Location"]).content.decode()
    assert 'id="completion-code">C0DE2024<' in page and "cc=C0DE2024" in page
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in page and f"/s/{study.token}/" in page
    assert '<strong class="big" id="people-needed">2</strong>' in page  # 5 puzzles x 2 / 5 each

    # A draft is edited whole: its pool is drawn again.
    edited = staff.post(f"/studies/{study.pk}/edit/", {**form, "quota_Bingo": "", "per_type": 4, "gold": []})
    assert edited.status_code == 302
    study.refresh_from_db()
    assert types_of(study) == {"Dice_Count": 4, "Bingo": 4} and not study.gold.exists()

    # Opened, only the wording changes; the pool stays.
    staff.post(f"/studies/{study.pk}/status/", {"status": "open"})
    before = pool_of(study)
    staff.post(f"/studies/{study.pk}/edit/", {**form, "name": "Renamed", "per_type": 1, "completion_code": "NEW1"})
    study.refresh_from_db()
    assert (study.name, study.completion_code, study.status, pool_of(study)) == ("Renamed", "NEW1", "open", before)
    with pytest.raises(StudySetupError, match="only a draft"):
        study_update(study, split="test", puzzles_per_annotator=1)


def test_the_form_shows_each_error_once(bank, staff):
    response = staff.post(
        "/studies/new/",
        {
            "name": "Too many",
            "split": "test",
            "types": ["Dice_Count"],
            "per_type": 20,
            "puzzles_per_annotator": 1,
            "overlap": 1,
            "order": "shuffled",
            "seed": 0,
            "attempts_per_puzzle": 1,
            "completion_code": "X",
        },
    )
    page = response.content.decode()
    assert response.status_code == 200 and page.count("Dice_Count has 8 (asked 20)") == 1
    missing = staff.post("/studies/new/", {"split": "test"}).content.decode()
    required = ("name", "puzzles_per_annotator", "overlap", "order", "seed", "attempts_per_puzzle")
    assert missing.count("This field is required.") == len(required)
    assert not Study.objects.exists()


def test_study_is_in_the_admin(bank, db):
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("root", "root@example.org", "pw"))
    study = study_create(name="In the admin", split="test", puzzles_per_annotator=1)
    assert "In the admin" in admin.get("/admin/annotation/study/").content.decode()
    assert admin.get(f"/admin/annotation/study/{study.pk}/change/").status_code == 200


# --- review -------------------------------------------------------------------------------------
def test_the_review_page_shows_the_puzzles_own_question(verified, staff):
    verified(types=("Geometry_Click",), per_type=3)
    for puzzle in Puzzle.objects.filter(type="Geometry_Click"):
        page = staff.get(f"/review/{puzzle.uid}/").content.decode()
        assert f"“{puzzle.public['instruction']}”" in page
        assert "cannot be redrawn here" in page  # a mask: retire it, or edit the JSON


def test_a_truth_is_corrected_through_the_types_form(bank, person, staff):
    study = study_create(name="s", split="test", types=["Dice_Count"], per_type=2, puzzles_per_annotator=1)
    enrollment = annotator(study, person, "ann")
    attempt = enrollment_next(enrollment=enrollment).attempt
    submit_answer(attempt, correct=False)
    puzzle = attempt.puzzle
    page = staff.get(f"/review/{puzzle.uid}/").content.decode()
    assert f'name="value" type="number" step="1" value="{puzzle.truth["sum"]}"' in page
    staff.post(f"/review/{puzzle.uid}/resolve/", {"action": "correct", "value": puzzle.truth["sum"] + 1, "note": "n"})
    attempt.refresh_from_db()
    assert attempt.correct and Puzzle.objects.get(pk=puzzle.pk).truth["sum"] == puzzle.truth["sum"] + 1
    bad = staff.post(f"/review/{puzzle.uid}/resolve/", {"action": "correct", "value": "many"}, follow=True)
    assert "must be a whole number" in bad.content.decode()


def test_options_and_cells_are_corrected_by_picking(bank, verified, staff):
    option = Puzzle.objects.filter(type="Object_Match").first()
    page = staff.get(f"/review/{option.uid}/").content.decode()
    assert page.count('type="radio" name="option"') == option.truth["option_count"]
    target = (option.truth["correct_option_index"] + 1) % option.truth["option_count"]
    staff.post(f"/review/{option.uid}/resolve/", {"action": "correct", "option": target})
    assert Puzzle.objects.get(pk=option.pk).truth["correct_option_index"] == target

    verified(types=("Select_Animal",), per_type=1)
    cells = Puzzle.objects.get(type="Select_Animal")
    rows, cols = cells.truth["grid_size"]
    page = staff.get(f"/review/{cells.uid}/").content.decode()
    assert page.count('type="checkbox" name="cell"') == rows * cols
    other = next(i for i in range(rows * cols) if i not in cells.truth["correct_patches"])
    staff.post(f"/review/{cells.uid}/resolve/", {"action": "correct", "cell": [str(other)]})
    assert Puzzle.objects.get(pk=cells.pk).truth["correct_patches"] == [other]
    none = staff.post(f"/review/{cells.uid}/resolve/", {"action": "correct"}, follow=True).content.decode()
    assert "tick at least one cell" in none
