"""Staff walk a study as a participant would (consent, practice, puzzles with gold among them, the
end page) without taking part: no enrolment, no place taken, nothing the study counts.

A preview's puzzles are the study's: its practice, then the first puzzles of its order (as many
as one person does) with its gold at places drawn as for a person (queue.gold_places, seeded by
the study's seed). Each is an attempt of the staff member's own outside any study (study=None,
purpose practice, as "Try it" and "Try one" make), so reports, quality control, exports, places,
progress and people's pass rates never see it, and a draft stays a draft whose set-up can still
change. Where the preview stands is kept in the staff member's session.
"""

from __future__ import annotations

import random

from django.contrib.auth.models import User
from django.contrib.sessions.backends.base import SessionBase
from django.urls import reverse
from django.utils import timezone

from annotation.live.attempts import attempt_opened_ms, participant_for_user
from annotation.live.page import StudyBar
from annotation.models import Attempt, Participant, Slot, Study
from annotation.studies.queue import Step, gold_places
from puzzles.models import Puzzle

PRACTICE, GOLD, SCORED = Attempt.Purpose.PRACTICE, Attempt.Purpose.GOLD, Attempt.Purpose.SCORED


def _key(study: Study) -> str:
    return f"arena-preview-{study.pk}"


def previewing(session: SessionBase, study: Study) -> bool:
    return _key(study) in session


def preview_plan(study: Study) -> list[tuple[int, str]]:
    """The puzzles a preview walks, in turn, as (puzzle id, what it stands for)."""
    practice = [(pk, PRACTICE) for pk in study.practice.order_by("pk").values_list("pk", flat=True)]
    ranked = Slot.objects.filter(study=study).order_by("rank", "copy").values_list("puzzle_id", flat=True)
    pool = list(dict.fromkeys(ranked))  # each puzzle once, in the study's order
    scored = pool[: study.puzzles_per_annotator]
    golds = sorted(study.gold.values_list("pk", flat=True))
    rng = random.Random(f"preview:{study.pk}:{study.seed}")
    places = gold_places(golds=len(golds), total=len(scored) + len(golds), rng=rng)
    rng.shuffle(golds)
    run: list[tuple[int, str]] = []
    while scored or golds:
        # As the queue serves gold: once as many puzzles are done as its place says.
        gold_due = golds and (not scored or places[len(places) - len(golds)] <= len(run))
        run.append((golds.pop(0), GOLD) if gold_due else (scored.pop(0), SCORED))
    return practice + run


def _counted(plan: list[list]) -> int:
    """The puzzles of a plan the study bar counts: all but practice."""
    return sum(1 for _, purpose in plan if purpose != PRACTICE)


def preview_start(session: SessionBase, study: Study) -> None:
    """Begin (or begin again) a preview: the plan drawn, nothing attempted yet."""
    plan = preview_plan(study)
    session[_key(study)] = {"plan": [list(item) for item in plan], "uids": [""] * len(plan)}


def preview_next(session: SessionBase, study: Study, *, user: User) -> Step:
    """Where the preview stands: consent (not begun), the next puzzle's attempt (made on first
    asking), or finished."""
    state = session.get(_key(study))
    if state is None:
        return Step("consent")
    participant = participant_for_user(user=user)
    plan, uids = state["plan"], state["uids"]
    total = _counted(plan)
    done = 0
    for index, (puzzle_id, purpose) in enumerate(plan):
        attempt = _attempt(participant, uids[index])
        if attempt is not None and attempt.is_submitted:
            done += purpose != PRACTICE
            continue
        if attempt is None or attempt.is_closed:
            puzzle = Puzzle.objects.filter(pk=puzzle_id).exclude(status=Puzzle.Status.RETIRED).first()
            if puzzle is None:  # retired since: the queue skips it too
                continue
            attempt = Attempt.objects.create(participant=participant, puzzle=puzzle, purpose=PRACTICE)
            uids[index] = attempt.uid
            session.modified = True
        return Step("attempt", attempt, done, total)
    return Step("finished", None, done, total)


def _attempt(participant: Participant, uid: str) -> Attempt | None:
    return Attempt.objects.filter(uid=uid, participant=participant).first() if uid else None


def preview_holds(session: SessionBase, study: Study, uid: str) -> bool:
    """Whether this attempt is one of the study's preview in this session."""
    state = session.get(_key(study))
    return state is not None and uid in state["uids"]


def preview_bar(session: SessionBase, study: Study, attempt: Attempt) -> StudyBar:
    """The study bar the puzzle page shows a participant, for this preview's attempt."""
    state = session[_key(study)]
    plan, uids = state["plan"], state["uids"]
    index = uids.index(attempt.uid)
    submitted = set(Attempt.objects.filter(uid__in=uids, submitted_at__isnull=False).values_list("uid", flat=True))
    done = sum(1 for (_, purpose), uid in zip(plan, uids, strict=True) if purpose != PRACTICE and uid in submitted)
    purpose = plan[index][1]
    return {
        "name": f"{study.name} (preview)",
        "practice": purpose == PRACTICE,
        "practice_left": sum(1 for _, p in plan[index + 1 :] if p == PRACTICE) if purpose == PRACTICE else 0,
        "done": done,
        "total": _counted(plan),
        "time_limit_s": study.time_limit_s,
        "elapsed_ms": max(0, round(timezone.now().timestamp() * 1000 - attempt_opened_ms(attempt=attempt))),
        "next_url": reverse("annotation:study-preview-next", args=[study.pk]),
        "pause_url": reverse("annotation:study-pause", args=[study.token]),
    }
