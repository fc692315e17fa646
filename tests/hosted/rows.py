"""A hosted benchmark's rows made directly, as a draw and a page check leave them, and people's
attempts on them: for the report's and the results import's tests (the draw, the proxy and the
scoring have tests of their own)."""

from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.live.attempts import participant_for_user
from annotation.models import Attempt, Benchmark, BenchmarkFamily, Enrollment
from puzzles.models import Puzzle

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
# How the stand-in names its puzzles (tests/hosted/standin.py): the peer's puzzle_id per address.
PEER_IDS = {"Red_Dot": "red_dot_seed_{}", "Dice_Roll_Path": "dice_roll_path_{:04d}", "Static_Jigsaw": "jigsaw_seed_{}"}


def hosted_benchmark() -> Benchmark:
    """nb: Red_Dot (seeded) and Dice_Roll_Path (stored) served; Static_Jigsaw failed its page check;
    Mirror set aside by the probe."""
    benchmark = Benchmark.objects.create(name="nb", base_url="http://127.0.0.1:7860", dialect="nextgen")
    now = timezone.now()
    families = [
        ("Red_Dot", "served", "", "seed", "passed"),
        ("Dice_Roll_Path", "served", "", "index", "passed"),
        ("Static_Jigsaw", "served", "page check: the page cannot submit a correct answer", "seed", "failed"),
        ("Mirror", "set_aside", "get_puzzle answered 404: no data for Mirror", "index", "pending"),
    ]
    for family, status, reason, address, page in families:
        BenchmarkFamily.objects.create(
            benchmark=benchmark,
            family=family,
            status=status,
            reason=reason,
            address=address,
            page_check=page,
            probed_at=now,
        )
    return benchmark


def hosted_puzzle(family: str, address: str, status: str = Puzzle.Status.VERIFIED) -> Puzzle:
    """A drawn puzzle of nb at the peer's address ("seed=17", "index=3"), with the peer's puzzle id."""
    kind, number = address.split("=")
    peer_id = PEER_IDS[family].format(int(number))
    served = status == Puzzle.Status.VERIFIED
    return Puzzle.objects.create(
        dataset="hosted:nb",
        type=f"nb:{family}",
        split="test",
        source_id=address,
        index=int(number),
        public={
            "hosted": {
                "benchmark": "nb",
                "family": family,
                "address": {"family": family, kind: int(number)},
                "puzzle_id": peer_id,
            }
        },
        truth={"answers": ["x"]} if served else {"set_aside": "the peer judged its own truth wrong"},
        status=status,
    )


def enrol(study, name: str):
    """(participant, enrollment) of a new person in the study, consented."""
    user = get_user_model().objects.create_user(username=name)
    participant = participant_for_user(user=user)
    enrollment = Enrollment.objects.create(study=study, participant=participant, consented_at=T0)
    return participant, enrollment


def answer(participant, puzzle, study, correct: bool, *, after_s: float, at: int) -> None:
    """A scored attempt served at T0 + at minutes, submitted after_s seconds later."""
    served = T0 + timedelta(minutes=at)
    attempt = Attempt.objects.create(
        participant=participant,
        puzzle=puzzle,
        study=study,
        purpose=Attempt.Purpose.SCORED,
        served_at=served,
        submitted_at=served + timedelta(seconds=after_s),
        correct=correct,
        input_ok=True,
        wall_ms=after_s * 1000,
        active_ms=after_s * 1000,
        action_count=2,
    )
    Attempt.objects.filter(pk=attempt.pk).update(created_at=served)  # the order of first attempts
