"""Studies: creation, the annotator's way through, safe assignment under concurrency, expiry."""

import threading
import time
from datetime import timedelta
from itertools import pairwise

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from annotation.live.attempts import participant_for_user
from annotation.live.intake import AttemptClosed
from annotation.models import Attempt, AuditLog, Enrollment, Slot, Study
from annotation.reporting.reports import study_report
from annotation.review.labels import puzzle_correct_truth
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import (
    StudySetupError,
    mixed_datasets_warning,
    ranked,
    study_create,
    study_datasets,
)
from puzzles.interop import export_captchaarena, import_captchaarena
from puzzles.models import Puzzle


def annotator(person, study, name):
    user, _ = person(name)
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    return enrollment


def submit(attempt, correct=True):
    """Submit an attempt through the real path as a person's page would: a right or a wrong typed
    answer (Dice_Count), or just the submit button (the other types: wrong)."""
    from tests.live_stream import submit_answer

    return submit_answer(attempt, correct)


def test_only_replay_verified_puzzles_enter_a_study(verified, stored_puzzle):
    pool = verified()
    draft = stored_puzzle("Pick_Area")
    with pytest.raises(StudySetupError, match="replay-verified"):
        study_create(name="s", split="test", puzzles_per_annotator=2, practice=[draft])
    study = study_create(name="s", split="test", puzzles_per_annotator=2, overlap=2)
    assert Slot.objects.filter(study=study).count() == 2 * len(pool)
    assert not Slot.objects.filter(study=study, puzzle=draft).exists()


def test_orders_block_or_interleave_types(verified):
    pool = verified(per_type=4)
    blocked = [p.type for p in ranked(pool, order=Study.Order.BLOCKED, seed=1)]
    assert blocked in (["Bingo"] * 4 + ["Dice_Count"] * 4, ["Dice_Count"] * 4 + ["Bingo"] * 4)
    interleaved = [p.type for p in ranked(pool, order=Study.Order.INTERLEAVED, seed=1)]
    assert all(a != b for a, b in pairwise(interleaved))
    assert ranked(pool, order="shuffled", seed=3) == ranked(pool, order="shuffled", seed=3)


def test_the_way_through_consent_practice_gold_and_the_end(verified, person):
    pool = verified(types=("Dice_Count",), per_type=6)
    study = study_create(name="s", split="test", puzzles_per_annotator=2, practice=[pool[0]], gold=[pool[1]])
    user, _ = person("ann")
    enrollment = enrollment_join(study=study, user=user, external_ids={"PROLIFIC_PID": "p1"})
    assert enrollment_next(enrollment=enrollment).kind == "consent"
    enrollment_consent(enrollment=enrollment)
    purposes = []
    for _ in range(4):
        step = enrollment_next(enrollment=enrollment)
        assert step.kind == "attempt"
        assert enrollment_next(enrollment=enrollment).attempt == step.attempt  # a refresh: the same attempt
        purposes.append(step.attempt.purpose)
        submit(step.attempt)
    assert purposes[0] == "practice" and sorted(purposes[1:]) == ["gold", "scored", "scored"]
    end = enrollment_next(enrollment=enrollment)
    assert (end.kind, end.done, end.total) == ("finished", 3, 3)
    assert Enrollment.objects.get(pk=enrollment.pk).finished_at is not None


def test_k_attempts_allow_retries_until_solved(verified, person):
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="s", split="test", puzzles_per_annotator=1, attempts_per_puzzle=3, show_verdict=True)
    enrollment = annotator(person, study, "kim")
    first = enrollment_next(enrollment=enrollment).attempt
    submit(first, correct=False)
    second = enrollment_next(enrollment=enrollment).attempt
    assert second != first and second.puzzle == first.puzzle and second.slot == first.slot
    submit(second, correct=True)
    assert enrollment_next(enrollment=enrollment).kind == "finished"


def test_a_truth_correction_that_solves_an_open_place_moves_its_holder_on(verified, person):
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(  # one order for everyone (not shuffled per person): lee meets kim's puzzle first
        name="s",
        split="test",
        puzzles_per_annotator=2,
        overlap=2,
        attempts_per_puzzle=3,
        show_verdict=True,
        order=Study.Order.BLOCKED,
    )
    kim, lee = annotator(person, study, "kim"), annotator(person, study, "lee")
    wrong = enrollment_next(enrollment=kim).attempt
    submit(wrong, correct=False)  # the sum plus one: one of three tries used, the place stays open
    right = enrollment_next(enrollment=lee).attempt
    assert right.puzzle_id == wrong.puzzle_id
    submit(right, correct=True)
    assert not Slot.objects.get(pk=wrong.slot_id).done and Slot.objects.get(pk=right.slot_id).done

    puzzle = Puzzle.objects.get(pk=wrong.puzzle_id)
    puzzle_correct_truth(puzzle=puzzle, truth={**puzzle.truth, "sum": puzzle.truth["sum"] + 1}, by=None)
    assert Attempt.objects.get(pk=wrong.pk).correct and not Attempt.objects.get(pk=right.pk).correct
    assert Slot.objects.get(pk=wrong.slot_id).done  # solved now: kim is not asked it again
    assert Slot.objects.get(pk=right.slot_id).done  # done before, still done: lee is not called back
    assert AuditLog.objects.get(puzzle=puzzle).details["places_solved"] == 1
    following = enrollment_next(enrollment=kim).attempt
    assert following.puzzle_id != puzzle.pk


@pytest.mark.django_db(transaction=True)
def test_a_truth_correction_and_the_holders_retry_at_once_both_go_through(verified, person, monkeypatch):
    """The correction holds the puzzle's row while it scores again and then closes the place; the
    holder asking for their retry meanwhile locks the place and inserts an attempt on the puzzle.
    With the puzzle locked FOR UPDATE that insert waited on it and PostgreSQL saw a deadlock."""
    import annotation.review.labels as labels

    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="s", split="test", puzzles_per_annotator=1, attempts_per_puzzle=3, show_verdict=True)
    kim = annotator(person, study, "kim")
    wrong = enrollment_next(enrollment=kim).attempt
    submit(wrong, correct=False)
    puzzle = Puzzle.objects.get(pk=wrong.puzzle_id)
    locked, errors = threading.Event(), []
    close_places = labels.places_mark_solved

    def slowly(**kwargs):  # the puzzle is locked by now: let the retry come in, then close the place
        locked.set()
        time.sleep(1.0)
        return close_places(**kwargs)

    monkeypatch.setattr(labels, "places_mark_solved", slowly)

    def in_thread(work):
        try:
            work()
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    def correct():
        puzzle_correct_truth(puzzle=puzzle, truth={**puzzle.truth, "sum": puzzle.truth["sum"] + 1}, by=None)

    def retry():
        assert locked.wait(10)
        enrollment_next(enrollment=Enrollment.objects.get(pk=kim.pk))

    threads = [threading.Thread(target=in_thread, args=(work,)) for work in (correct, retry)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert Slot.objects.get(pk=wrong.slot_id).done and Attempt.objects.get(pk=wrong.pk).correct


@pytest.mark.django_db(transaction=True)
def test_overlap_is_never_exceeded_with_many_annotators_at_once(verified, person):
    verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="s", split="test", puzzles_per_annotator=3, overlap=2)
    enrollments = [annotator(person, study, f"a{i}") for i in range(8)]
    barrier = threading.Barrier(len(enrollments))
    errors = []

    def take(enrollment):
        try:
            barrier.wait()
            enrollment_next(enrollment=enrollment)
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=take, args=(e,)) for e in enrollments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    holders = {}
    for slot in Slot.objects.filter(study=study, enrollment__isnull=False):
        holders.setdefault(slot.puzzle_id, []).append(slot.enrollment_id)
    assert sum(len(h) for h in holders.values()) == 6  # 3 puzzles x overlap 2: six people got one
    assert all(len(h) == len(set(h)) <= 2 for h in holders.values())
    assert Attempt.objects.filter(study=study).count() == 6


def test_an_abandoned_assignment_expires_and_goes_back_to_the_queue(verified, person):
    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="s", split="test", puzzles_per_annotator=1)
    first, second = annotator(person, study, "slow"), annotator(person, study, "next")
    abandoned = enrollment_next(enrollment=first).attempt
    assert enrollment_next(enrollment=second).kind == "waiting"  # the only puzzle is taken
    later = timezone.now() + timedelta(minutes=study.hold_minutes + 1)
    taken = enrollment_next(enrollment=second, now=later).attempt
    assert taken.puzzle == abandoned.puzzle
    assert Attempt.objects.get(pk=abandoned.pk).abandoned_at is not None
    with pytest.raises(AttemptClosed):  # the first page's late answer no longer counts
        submit(Attempt.objects.get(pk=abandoned.pk))


def test_invite_link_records_crowd_ids_and_the_resume_link_continues_on_another_device(verified):
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="Pilot", split="test", puzzles_per_annotator=2)
    link = f"/s/{study.token}/?PROLIFIC_PID=abc123&STUDY_ID=s9"
    browser = Client()
    assert "I agree, start" in browser.get(link).content.decode()
    started = browser.post(link)  # the consent form posts back to the link, query and all
    assert started.status_code == 302
    first = browser.get(started["Location"])
    enrollment = Enrollment.objects.get(study=study)
    assert enrollment.external_ids == {"PROLIFIC_PID": "abc123", "STUDY_ID": "s9"}
    attempt = Attempt.objects.get(study=study)
    assert first["Location"] == f"/play/{attempt.uid}/"
    page = browser.get(first["Location"])
    assert page.context["page_data"]["study"]["total"] == 2
    other_device = Client()
    elsewhere = other_device.get(link).content.decode()  # the crowd id alone signs nobody in...
    assert 'id="elsewhere"' in elsewhere and "I agree, start" not in elsewhere
    assert other_device.post(link).status_code == 409  # ...and takes no second place
    assert Enrollment.objects.filter(study=study).count() == 1
    resume_url = browser.get(f"/s/{study.token}/pause/").context["resume_url"]
    assert other_device.get(resume_url).status_code == 200  # a GET signs nobody in
    assert other_device.get(f"/s/{study.token}/next/")["Location"] == f"/s/{study.token}/"
    resumed = other_device.post(resume_url, follow=True)
    assert resumed.redirect_chain[-1][0] == f"/play/{attempt.uid}/"  # exactly where they stopped
    for _ in range(2):
        submit(
            Attempt.objects.filter(study=study, submitted_at__isnull=True).first()
            or enrollment_next(enrollment=enrollment).attempt
        )
        enrollment_next(enrollment=enrollment)
    end = browser.get(f"/s/{study.token}/next/").content.decode()
    assert study.completion_code in end and "prolific" in end.lower()


def test_no_one_uses_a_study_without_its_link(verified, person):
    verified(types=("Dice_Count",), per_type=1)
    study_create(name="s", split="test", puzzles_per_annotator=1)
    assert Client().get("/s/not-the-token/").status_code == 404


def test_a_person_has_one_participant_however_often_asked(person):
    user, _ = person("one")
    assert participant_for_user(user=user) == participant_for_user(user=user)


def test_a_study_time_limit_and_its_verdict_setting_apply_on_the_server(verified, person):
    from annotation.live.intake import batch_receive
    from tests.live_stream import submit_answer

    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="timed", split="test", puzzles_per_annotator=2, time_limit_s=2, show_verdict=True)
    enrollment = annotator(person, study, "tim")
    late = enrollment_next(enrollment=enrollment).attempt
    submit_answer(late, True, wall_ms=5000)  # right, but five seconds on a two-second limit
    late = Attempt.objects.get(pk=late.pk)
    assert late.correct is False and "the limit is 2 s" in late.reason
    prompt = enrollment_next(enrollment=enrollment).attempt
    import json
    import time

    from tests.live_stream import Hand

    now = time.time() * 1000
    hand = Hand(prompt.puzzle, now - 500).press_control("text").type(str(prompt.puzzle.truth["sum"]))
    frame = json.dumps({"type": "batch", "seq": 1, "events": hand.press_control("submit", {"k": "act.submit"}).events})
    replies = batch_receive(
        attempt=Attempt.objects.select_related("puzzle", "study").get(pk=prompt.pk), raw=frame, received_ms=now
    ).replies
    assert replies[-1] == {"type": "submitted", "verdict": {"correct": True}}  # this study shows verdicts
    assert Attempt.objects.get(pk=prompt.pk).input_ok


def test_a_crowd_id_never_signs_anyone_in_as_an_account_with_a_password(verified):
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="s", split="test", puzzles_per_annotator=1)
    from django.contrib.auth import get_user_model

    boss = get_user_model().objects.create_user("boss", password="secret", is_staff=True)
    staff = Client()
    staff.force_login(boss)
    link = f"/s/{study.token}/?PROLIFIC_PID=same&SESSION_ID=theirs"
    staff.get(link)
    staff.post(link)
    stranger = Client()
    # Even with the platform session it joined with: an account with a password signs in by password.
    page = stranger.get(link)
    assert page.status_code == 200 and 'id="elsewhere"' in page.content.decode()  # not signed in as boss
    assert stranger.post(link).status_code == 409
    assert stranger.get("/review/").status_code == 302
    assert Enrollment.objects.filter(study=study).count() == 1


@pytest.mark.django_db(transaction=True)
def test_one_annotator_asking_many_times_at_once_gets_one_puzzle(verified, person):
    verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="s", split="test", puzzles_per_annotator=3, overlap=2)
    enrollment = annotator(person, study, "eager")
    barrier = threading.Barrier(6)
    seen = []

    def ask():
        try:
            barrier.wait()
            seen.append(enrollment_next(enrollment=enrollment).attempt.pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == 1 and len(seen) == 6
    assert Slot.objects.filter(enrollment=enrollment).count() == 1


def test_a_place_with_an_answer_does_not_expire_to_someone_else(verified, person):
    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="s", split="test", puzzles_per_annotator=1, attempts_per_puzzle=2, show_verdict=True)
    first, second = annotator(person, study, "a"), annotator(person, study, "b")
    submit(enrollment_next(enrollment=first).attempt, correct=False)  # one of two tries used
    later = timezone.now() + timedelta(minutes=study.hold_minutes + 1)
    assert enrollment_next(enrollment=second, now=later).kind == "waiting"
    retry = enrollment_next(enrollment=first, now=later).attempt
    submit(retry, correct=True)
    assert Slot.objects.get(study=study).done


def test_retired_puzzles_leave_the_queue(verified, person):
    pool = verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="s", split="test", puzzles_per_annotator=2)
    Puzzle.objects.filter(pk=pool[0].pk).update(status=Puzzle.Status.RETIRED)
    enrollment = annotator(person, study, "r")
    first = enrollment_next(enrollment=enrollment).attempt
    assert first.puzzle_id == pool[1].pk
    submit(first)
    assert enrollment_next(enrollment=enrollment).kind == "waiting"  # nothing else to give


def test_re_scoring_after_a_truth_correction_keeps_the_time_limit(verified, person):
    from tests.live_stream import submit_answer

    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="s", split="test", puzzles_per_annotator=1, time_limit_s=2)
    late = enrollment_next(enrollment=annotator(person, study, "t")).attempt
    submit_answer(late, True, wall_ms=6000)
    puzzle = Puzzle.objects.get(pk=late.puzzle_id)
    puzzle_correct_truth(puzzle=puzzle, truth=dict(puzzle.truth), by=None)
    assert Attempt.objects.get(pk=late.pk).correct is False


# --- datasets: the generated bank and each import, kept apart unless mixed on purpose ----------------
@pytest.fixture
def two_datasets(verified, tmp_path):
    """Three verified Dice_Count puzzles of the generated bank, and the same exported and imported."""
    generated = verified(types=("Dice_Count",), per_type=3)
    export_captchaarena(tmp_path, split="test", dataset="generated:5")
    import_captchaarena(tmp_path, name="published")
    Puzzle.objects.filter(dataset="import:published").update(status=Puzzle.Status.VERIFIED)
    return generated, list(Puzzle.objects.filter(dataset="import:published"))


def test_a_study_keeps_to_its_dataset_and_says_which_exist(two_datasets):
    _, imported = two_datasets
    bank = study_create(name="bank", split="test", puzzles_per_annotator=1, dataset="generated:5")
    assert study_datasets(bank) == {"generated:5": 3} and mixed_datasets_warning(bank) is None
    published = study_create(name="published", split="test", puzzles_per_annotator=1, dataset="import:published")
    assert {s.puzzle_id for s in published.slots.all()} == {p.pk for p in imported}
    with pytest.raises(StudySetupError, match=r"of dataset 'import:other'.*generated:5 \(3\), import:published \(3\)"):
        study_create(name="x", split="test", puzzles_per_annotator=1, dataset="import:other")

    mixed = study_create(name="mixed", split="test", puzzles_per_annotator=1)  # every dataset: never silently
    assert study_datasets(mixed) == {"generated:5": 3, "import:published": 3}
    assert "mixes 2 datasets: generated:5 (3), import:published (3)" in mixed_datasets_warning(mixed)


def test_a_report_lists_the_datasets_and_keeps_to_one(two_datasets, person):
    mixed = study_create(name="mixed", split="test", puzzles_per_annotator=6)
    enrollment = annotator(person, mixed, "ann")
    for _ in range(6):
        submit(enrollment_next(enrollment=enrollment).attempt)
    whole = study_report(study=mixed)
    assert whole["study"]["datasets"] == {"generated:5": 3, "import:published": 3} and whole["study"]["dataset"] is None
    assert whole["overall"]["attempts"] == 6
    one = study_report(study=mixed, dataset="import:published")
    assert one["study"]["dataset"] == "import:published" and one["overall"]["attempts"] == 3
    assert one["public_truth_puzzles"] == 3
    with pytest.raises(CommandError, match="its datasets: generated:5 \\(3\\), import:published \\(3\\)"):
        call_command("report", "--study", "mixed", "--dataset", "import:nope", "--format", "json")


def test_the_study_form_offers_each_dataset(two_datasets):
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("staff", is_staff=True))
    page = staff.get("/studies/new/").content.decode()
    assert (
        "<strong>generated:5</strong> (3 in test)" in page and "<strong>import:published</strong> (3 in test)" in page
    )
    form = {"name": "Bank only", "split": "test", "puzzles_per_annotator": 1, "overlap": 1, "order": "shuffled"}
    created = staff.post("/studies/new/", {**form, "seed": 0, "attempts_per_puzzle": 1, "dataset": "generated:5"})
    assert created.status_code == 302
    study = Study.objects.get(name="Bank only")
    assert set(study.slots.values_list("puzzle__dataset", flat=True)) == {"generated:5"}
    mixed = staff.post(
        "/studies/new/", {**form, "name": "Both", "seed": 0, "attempts_per_puzzle": 1, "dataset": ""}, follow=True
    )
    assert "Its pool mixes 2 datasets" in mixed.content.decode()
