"""Dataset tests: studies answered through the real intake (the events a person's page logs)."""

import time
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model

from annotation.live.attempts import participant_for_user
from annotation.live.frames import Batch
from annotation.live.intake import events_append
from annotation.models import Attempt, Enrollment
from puzzles.models import Puzzle
from puzzles.services import bank_generate
from tests.live_stream import Hand, submit_answer


@pytest.fixture(autouse=True)
def _private_in_tmp(settings, tmp_path):
    settings.PRIVATE_ROOT = tmp_path / "private"


@pytest.fixture
def dice(db):
    """make(n) -> n replay-verified Dice_Count puzzles of dataset generated:41, split test."""

    def make(n: int = 4) -> list[Puzzle]:
        bank_generate(split="test", per_type=n, types=["Dice_Count"], bank_seed=41, workers=1)
        Puzzle.objects.filter(dataset="generated:41").update(status=Puzzle.Status.VERIFIED)
        return list(Puzzle.objects.filter(dataset="generated:41").order_by("index"))

    return make


class People:
    """Annotators of one study, each answering puzzles through the real intake."""

    def __init__(self, study):
        self.study, self.by_name = study, {}

    def __call__(self, name: str):
        if name not in self.by_name:
            user = get_user_model().objects.create_user(username=name, password="pw")
            participant = participant_for_user(user=user)
            Enrollment.objects.create(study=self.study, participant=participant)
            self.by_name[name] = participant
        return self.by_name[name]

    def answer(self, name: str, puzzle: Puzzle, correct: bool) -> Attempt:
        attempt = Attempt.objects.create(participant=self(name), puzzle=puzzle, study=self.study)
        submit_answer(attempt, correct)
        return Attempt.objects.get(pk=attempt.pk)

    def answer_without_input(self, name: str, puzzle: Puzzle, text: str) -> Attempt:
        """Semantic actions with no key or pointer behind them: a script, not a hand."""
        attempt = Attempt.objects.create(participant=self(name), puzzle=puzzle, study=self.study)
        now = time.time() * 1000
        hand = Hand(puzzle, now - 3000)
        hand.wait(1500).log("act.type", text=text)
        hand.wait(200).log("act.submit")
        opened = datetime.fromtimestamp((now - 3100) / 1000, tz=UTC)
        Attempt.objects.filter(pk=attempt.pk).update(created_at=opened, served_at=opened)
        events_append(attempt_id=attempt.pk, batch=Batch(1, hand.events), received_ms=now)
        return Attempt.objects.get(pk=attempt.pk)
