"""Hidden verdicts stay hidden (issue 26): with k attempts, a retry comes only after a wrong
answer, so a study that hides verdicts must not offer one. Set-up refuses k > 1 with verdicts
hidden; a study stored so anyway (older data, the admin) allows one attempt: the person who
answered wrong and the one who answered right see the same thing next, and its report says k = 1."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Attempt, Study
from annotation.reporting.reports import study_report
from annotation.studies.setup import StudySetupError, study_create, study_update
from tests.live_stream import submit_answer


def stored_with_retries(*, show_verdict: bool) -> Study:
    """A study of two puzzles a person, stored with k = 3 past the set-up's check, as an older
    study or an admin edit could hold it."""
    study = study_create(name="k3", split="test", puzzles_per_annotator=2, overlap=2, show_verdict=show_verdict)
    Study.objects.filter(pk=study.pk).update(attempts_per_puzzle=3)
    return Study.objects.get(pk=study.pk)


def first_puzzle(study: Study) -> tuple[Client, Attempt]:
    """A browser that joined through the invite link and was sent to its first puzzle."""
    client = Client()
    client.get(f"/s/{study.token}/")
    client.post(f"/s/{study.token}/")
    return client, attempt_at(client.get(f"/s/{study.token}/next/")["Location"])


def attempt_at(location: str) -> Attempt:
    return Attempt.objects.get(uid=location.removeprefix("/play/").strip("/"))


def after_answering(study: Study, *, correct: bool) -> dict:
    """What the person sees once their first answer is in: where the study sends them, whether it
    is the same puzzle again, and the progress bar of that page."""
    client, first = first_puzzle(study)
    submit_answer(first, correct)
    following = client.get(f"/s/{study.token}/next/")
    if following.status_code != 302:
        return {"page": following.status_code}
    attempt = attempt_at(following["Location"])
    bar = client.get(f"/play/{attempt.uid}/data/").json()["study"]
    return {"page": "puzzle", "again": attempt.puzzle_id == first.puzzle_id, "progress": (bar["done"], bar["total"])}


@pytest.fixture
def pool(verified):
    return verified(types=("Dice_Count",), per_type=3)


def test_with_verdicts_hidden_a_wrong_answer_looks_like_a_right_one(pool):
    study = stored_with_retries(show_verdict=False)
    wrong, right = after_answering(study, correct=False), after_answering(study, correct=True)
    assert wrong == right == {"page": "puzzle", "again": False, "progress": (1, 2)}


def test_with_verdicts_shown_a_wrong_answer_is_retried(pool):
    """The contrast: where people see their verdict, a retry tells them nothing new."""
    study = stored_with_retries(show_verdict=True)
    assert after_answering(study, correct=False) == {"page": "puzzle", "again": True, "progress": (0, 2)}
    assert after_answering(study, correct=True) == {"page": "puzzle", "again": False, "progress": (1, 2)}


def test_with_verdicts_hidden_a_wrong_answer_closes_its_place_when_submitted(pool):
    """Staff progress and the dashboard count the place done at once, not when its holder next asks
    for work (a person who leaves after a wrong answer would hold it open for good)."""
    study = stored_with_retries(show_verdict=False)
    _, first = first_puzzle(study)
    submit_answer(first, False)
    first.refresh_from_db()
    assert first.correct is False and first.slot.done


def test_the_report_of_such_a_study_counts_pass_at_1(pool):
    study = stored_with_retries(show_verdict=False)
    after_answering(study, correct=False)
    report = study_report(study=study)
    assert report["study"]["attempts_per_puzzle"] == report["overall"]["k"] == 1
    assert report["overall"]["pass1_pooled"] == 0 and report["overall"]["pass_k_pooled"] is None


def test_set_up_refuses_retries_with_verdicts_hidden(pool):
    with pytest.raises(StudySetupError, match="needs verdicts shown"):
        study_create(name="k3", split="test", puzzles_per_annotator=1, attempts_per_puzzle=3)
    draft = study_create(name="k1", split="test", puzzles_per_annotator=1, status=Study.Status.DRAFT)
    with pytest.raises(StudySetupError, match="needs verdicts shown"):
        study_update(draft, split="test", puzzles_per_annotator=1, attempts_per_puzzle=2)
    shown = study_create(
        name="k3 shown", split="test", puzzles_per_annotator=1, attempts_per_puzzle=3, show_verdict=True
    )
    assert shown.attempts_allowed == 3


def test_the_study_form_refuses_retries_with_verdicts_hidden(pool):
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    form = {
        "name": "Retries",
        "split": "test",
        "puzzles_per_annotator": 1,
        "overlap": 1,
        "order": "shuffled",
        "seed": 0,
        "attempts_per_puzzle": 3,
        "completion_code": "RETRY1",
    }
    refused = staff.post("/studies/new/", form)
    assert refused.status_code == 200 and "needs verdicts shown" in refused.content.decode()
    assert not Study.objects.exists()
    assert staff.post("/studies/new/", {**form, "show_verdict": "on"}).status_code == 302
    assert Study.objects.get().attempts_allowed == 3
