"""A rescore (after a truth correction) reads the batches the first score read."""

import time

import pytest

from annotation.live.intake import GAP_WAIT_S, attempt_resolve_gap
from annotation.live.scoring import attempt_rescore
from annotation.models import Attempt
from tests.live_stream import ev, load, send

pytestmark = pytest.mark.django_db


def test_a_rescore_after_a_gap_keeps_to_the_submit_that_was_scored(open_attempt):
    """The first page's right answer waits behind batch 2 and is scored after the wait; a reload's
    run holds a wrong answer and a later submit, incomplete (batch 5 never came). Rescoring read
    through the last batch stored and took the reload's wrong answer."""
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    right = str(attempt.puzzle.truth["sum"])
    send(attempt, 1, load(now), at=now)
    send(attempt, 3, ev("act.type", now + 2, text=right), ev("act.submit", now + 3), at=now + 3)
    send(attempt, 4, load(now + 10), at=now + 10)
    send(attempt, 6, ev("act.type", now + 12, text=right + "0"), ev("act.submit", now + 13), at=now + 13)
    assert attempt_resolve_gap(attempt_id=attempt.pk, now_ms=now + 3 + GAP_WAIT_S * 1000 + 1)
    scored = Attempt.objects.select_related("puzzle", "study").get(pk=attempt.pk)
    assert scored.correct and scored.answer == right and scored.missing_batches == [2]
    assert scored.scored_through == 3 and scored.max_seq == 6
    assert attempt_rescore(attempt=scored) is False
    again = Attempt.objects.get(pk=attempt.pk)
    assert again.correct and again.answer == right
