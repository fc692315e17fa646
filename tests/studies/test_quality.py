"""Quality control and the staff study pages."""

import re
import time

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Attempt, AuditLog, Enrollment, Event, Study
from annotation.reporting.reports import study_report
from annotation.studies.quality import annotator_table, attempt_marks, times_hidden
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.live_stream import Hand, deliver, served_at, submit_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(verified):
    verified(types=("Dice_Count",), per_type=4)
    gold = Puzzle.objects.get(dataset="generated:5", index=3)
    return study_create(name="QC", split="test", puzzles_per_annotator=2, overlap=2, gold=[gold])


def join(study, person, name):
    user, _ = person(name)
    enrollment = enrollment_join(study=study, user=user, external_ids={"PROLIFIC_PID": f"pid-{name}"})
    enrollment_consent(enrollment=enrollment)
    return enrollment


def submit_hidden_thrice(attempt):
    """A page hidden three times, 39 s in all, before a right answer, sent as the page sends it
    (batches as they happen, beats while visible)."""
    start = time.time() * 1000 - 50_000
    served_at(attempt, start - 100)
    hand = Hand(attempt.puzzle, start)
    for _ in range(3):
        hand.wait(2_000).hidden(13_000)
    hand.wait(2_000).press_control("text").type(str(attempt.puzzle.truth["sum"]))
    deliver(attempt, hand.press_control("submit", {"k": "act.submit"}).events)


def test_marks_find_fast_hidden_and_tab_switching_attempts(study, person):
    fast, careful = join(study, person, "fast"), join(study, person, "careful")
    quick = enrollment_next(enrollment=fast).attempt
    submit_answer(quick, True)  # no wall time at all: faster than anyone can look
    slow = enrollment_next(enrollment=careful).attempt
    submit_hidden_thrice(slow)
    marks = attempt_marks(study=study)
    assert marks[quick.pk] == ["fast"]
    assert marks[slow.pk] == ["hidden", "tabs"]


def test_times_hidden_counts_a_pages_changes_to_hidden_and_nothing_else(study, person):
    """The tabs mark reads this count: a change back to visible, or another kind of event that
    carries a state of "hidden", is not a time hidden."""
    never, twice, thrice = (enrollment_next(enrollment=join(study, person, n)).attempt for n in ("n", "t", "h"))

    def log(attempt, *events):
        Event.objects.bulk_create(
            Event(attempt=attempt, seq=1, index=i, kind=kind, t=float(i), received=float(i), data=data)
            for i, (kind, data) in enumerate(events)
        )

    hidden, shown = ("visibilitychange", {"state": "hidden"}), ("visibilitychange", {"state": "visible"})
    log(never, ("load", {"state": "hidden"}), shown)
    log(twice, hidden, shown, hidden, shown)
    log(thrice, hidden, shown, hidden, shown, hidden)
    counted = dict(Attempt.objects.annotate(n=times_hidden()).values_list("pk", "n"))
    assert (counted[never.pk], counted[twice.pk], counted[thrice.pk]) == (0, 2, 3)


def test_the_annotator_table_asks_the_same_queries_however_many_are_at_work(study, person):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            annotator_table(study=study)
        return len(captured.captured_queries)

    for name in ("a", "b"):
        enrollment_next(enrollment=join(study, person, name))
    two = queries()
    for name in ("c", "d", "e"):
        enrollment_next(enrollment=join(study, person, name))
    assert queries() == two  # none per annotator (each row's stuck check reads the study)


def test_the_annotator_table_and_a_reversible_logged_exclusion(study, person, staff):
    ann = join(study, person, "ann")
    answers = iter([True, False, True])
    while (step := enrollment_next(enrollment=ann)).kind == "attempt":
        submit_answer(step.attempt, next(answers), wall_ms=3000)
    row = next(r for r in annotator_table(study=study) if r["name"] == "ann")
    gold_correct = Attempt.objects.get(study=study, purpose="gold").correct
    assert row["attempts"] == 2 and row["gold"] == 1 and row["gold_accuracy"] == float(gold_correct)
    assert row["accuracy"] == sum(a.correct for a in Attempt.objects.filter(study=study, purpose="scored")) / 2
    url = f"/studies/{study.pk}/annotators/{ann.pk}/"
    staff.post(url, {"action": "exclude", "reason": "copied answers"})
    assert Enrollment.objects.get(pk=ann.pk).excluded and study_report(study=study)["overall"]["attempts"] == 0
    staff.post(url, {"action": "include"})
    assert not Enrollment.objects.get(pk=ann.pk).excluded and study_report(study=study)["overall"]["attempts"] == 2
    assert list(AuditLog.objects.filter(enrollment=ann).values_list("action", flat=True).order_by("at")) == [
        "annotator_excluded",
        "annotator_included",
    ]
    page = staff.get(f"/studies/{study.pk}/annotators/").content.decode()
    assert "pid-ann" in page and "Exclude" in page


def test_staff_create_a_study_from_the_form_and_see_its_invite_link(study, staff):
    response = staff.post(
        "/studies/new/",
        {
            "name": "Second",
            "split": "test",
            "types": ["Dice_Count"],
            "puzzles_per_annotator": 2,
            "overlap": 1,
            "order": "blocked",
            "seed": 1,
            "attempts_per_puzzle": 1,
            "practice": "",
            "gold": "",
        },
    )
    assert response.status_code == 302
    created = Study.objects.get(name="Second")
    assert created.slots.count() == 4  # all four verified puzzles: gold only leaves the pool of its own study
    listing = staff.get("/studies/").content.decode()
    assert f"/s/{created.token}/" in listing
    refused = staff.post(
        "/studies/new/",
        {
            "name": "None",
            "split": "val",
            "puzzles_per_annotator": 1,
            "overlap": 1,
            "order": "shuffled",
            "seed": 0,
            "attempts_per_puzzle": 1,
        },
    )
    assert "no replay-verified puzzles" in refused.content.decode()


def test_annotators_cannot_reach_the_staff_pages(study, person):
    user, _ = person("ann")
    client = Client()
    client.force_login(user)
    for url in ("/studies/", "/studies/new/", f"/studies/{study.pk}/annotators/"):
        assert client.get(url).status_code == 302, url


def test_the_person_page_says_timed_out_as_the_report_does_and_times_in_seconds(verified, person, staff):
    """A wrong answer sent at the time limit is a time-out in the report; the QC pages say so too,
    and give times in seconds, as the report does."""
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="Timed", split="test", puzzles_per_annotator=2, time_limit_s=10)
    ann = join(study, person, "ann")
    submit_answer(enrollment_next(enrollment=ann).attempt, False, wall_ms=8_000)  # the limit was near
    submit_answer(enrollment_next(enrollment=ann).attempt, False, wall_ms=1_000)
    overall = study_report(study=study)["overall"]
    assert (overall["timed_out"], overall["wrong"]) == (1, 1)
    page = staff.get(reverse("annotation:annotator-attempts", args=[study.pk, ann.pk])).content.decode()
    verdicts = re.findall(r'<span class="verdict verdict-([\w-]+)">([^<]+)</span>', page)
    assert verdicts == [("timed-out", "timed out"), ("wrong", "wrong")]
    assert re.search(r"<dt>Active · wall</dt><dd>\d+\.\d · 8\.\d s</dd>", page)
    assert re.search(r"<dt>Median active</dt><dd>\d+\.\d s</dd>", page) and not re.search(r"\d ms\b", page)
    table = staff.get(f"/studies/{study.pk}/annotators/").content.decode()
    assert re.search(r'data-label="Median active" class="num">\d+\.\d s</td>', table)


def test_the_staff_menu_reaches_the_datasets_and_agent_runs_pages(staff, person):
    nav = re.search(r'<nav aria-label="Site">(.*?)</nav>', staff.get("/studies/").content.decode(), re.S)
    links = {name: href for href, name in re.findall(r'<a href="([^"]+)">([^<]+)</a>', nav.group(1))}
    assert links["Datasets"] == reverse("annotation:dataset-labels")
    assert links["Agent runs"] == reverse("annotation:agent-runs")
    assert all(staff.get(href).status_code == 200 for href in links.values())
    annotator = Client()
    annotator.force_login(person("ann")[0])
    assert "Agent runs" not in annotator.get("/").content.decode()
