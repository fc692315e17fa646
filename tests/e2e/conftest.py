"""Browser tests: the machine's Chromium on the live page, served by a real daphne process."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from annotation.agents.browser import chromium, open_attempt, signed_in_context
from annotation.agents.server import live_server
from annotation.live.attempts import attempt_start, participant_for_user
from puzzles.models import Puzzle
from puzzles.services import bank_generate

pytestmark = pytest.mark.browser


@pytest.fixture
def site(transactional_db):
    """Base URL of a live page server that sees this test's (committed) data."""
    with live_server() as url:
        yield url


@pytest.fixture
def puzzles_of(transactional_db):
    def make(*types: str, index: int = 0) -> list[Puzzle]:
        bank_generate(split="test", per_type=1, start=index, types=list(types) or None, bank_seed=11, workers=1)
        return list(Puzzle.objects.filter(index=index, dataset="generated:11").order_by("type"))

    return make


@pytest.fixture
def annotator(transactional_db):
    def make(name: str = "annie"):
        user = get_user_model().objects.create_user(username=name, password="pw")
        return user, participant_for_user(user=user)

    return make


def verified_puzzles(types: list[str], *, per_type: int, seed: int) -> list[Puzzle]:
    """Generated test puzzles marked replay-verified (a study takes only those), by type and index."""
    bank_generate(split="test", per_type=per_type, types=types, bank_seed=seed, workers=1)
    made = Puzzle.objects.filter(dataset=f"generated:{seed}")
    made.update(status=Puzzle.Status.VERIFIED)
    return list(made.order_by("type", "index"))


def run(coroutine):
    return asyncio.run(coroutine)


async def page_for(browser, site, user, puzzle, *, init_script: str | None = None):
    """A signed-in page showing a fresh attempt of `user` on `puzzle`; returns (page, attempt)."""
    participant = await sync_to_async(participant_for_user)(user=user)
    attempt = await sync_to_async(attempt_start)(participant=participant, puzzle=puzzle)
    context = await signed_in_context(browser, site, user)
    if init_script:
        await context.add_init_script(init_script)
    page = await context.new_page()
    await open_attempt(page, attempt.uid)
    return page, attempt


__all__ = ["chromium", "page_for", "run", "verified_puzzles"]
