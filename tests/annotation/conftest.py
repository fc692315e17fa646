import json
from datetime import UTC

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.live.attempts import attempt_start, participant_for_user
from arena_site.asgi import application
from puzzles.models import Puzzle
from puzzles.services import bank_generate


@pytest.fixture
def stored_puzzle(db):
    """make(type_name, index=0) -> a generated, stored puzzle."""

    def make(type_name: str, index: int = 0) -> Puzzle:
        bank_generate(split="test", per_type=1, start=index, types=[type_name], bank_seed=7, workers=1)
        return Puzzle.objects.get(type=type_name, index=index, dataset="generated:7")

    return make


@pytest.fixture
def verified(db):
    """make(types, per_type) -> stored test puzzles, marked replay-verified (studies need that)."""

    def make(types=("Dice_Count", "Bingo"), per_type=3) -> list[Puzzle]:
        bank_generate(split="test", per_type=per_type, types=list(types), bank_seed=5, workers=1)
        Puzzle.objects.filter(dataset="generated:5").update(status=Puzzle.Status.VERIFIED)
        return list(Puzzle.objects.filter(dataset="generated:5", type__in=types).order_by("type", "index"))

    return make


@pytest.fixture
def person(db):
    """make(name) -> (user, session cookie value)."""

    def make(name: str = "ann"):
        user = get_user_model().objects.create_user(username=name, password="pw")
        client = Client()
        client.force_login(user)
        return user, client.cookies["sessionid"].value

    return make


@pytest.fixture
def open_attempt(stored_puzzle, person):
    """make(type_name) -> (attempt, session cookie) for a fresh person."""
    counter = iter(range(1000))

    def make(type_name: str = "Geometry_Click", *, who: str | None = None):
        user, session = person(who or f"person{next(counter)}")
        attempt = attempt_start(participant=participant_for_user(user=user), puzzle=stored_puzzle(type_name))
        return attempt, session

    return make


def socket_for(uid: str, session: str | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver")]
    if session:
        headers.append((b"cookie", f"sessionid={session}".encode()))
    return WebsocketCommunicator(application, f"/ws/attempts/{uid}/", headers=headers)


def batch(seq: int, *events: dict) -> str:
    return json.dumps({"type": "batch", "seq": seq, "events": list(events)})


def submit_answer(attempt, correct: bool = True, *, wall_ms: float = 0.0):
    """Submit an attempt through the real path (events_append), right or wrong, for the two types
    the study tests use: Dice_Count (typed sum) and Object_Match (arrow steps)."""
    import time
    from datetime import datetime

    from annotation.live.frames import Batch
    from annotation.live.intake import events_append
    from annotation.models import Attempt

    now = time.time() * 1000
    if wall_ms:  # the page was shown that long ago
        opened = datetime.fromtimestamp((now - wall_ms - 100) / 1000, tz=UTC)
        Attempt.objects.filter(pk=attempt.pk).update(created_at=opened)
    truth = attempt.puzzle.truth
    events = [{"k": "load", "t": now - wall_ms, "w": 1, "h": 1, "scale": 1, "state": "visible"}]
    if attempt.puzzle.type == "Dice_Count":
        events.append({"k": "act.type", "t": now - 1, "text": str(truth["sum"] + (0 if correct else 1))})
    else:
        steps = truth["correct_option_index"] + (0 if correct else 1)
        events += [{"k": "act.cycle", "t": now - 1, "delta": 1}] * (steps % truth["option_count"])
    events.append({"k": "act.submit", "t": now})
    return events_append(attempt_id=attempt.pk, batch=Batch(attempt.max_seq + 1, events), received_ms=now)
