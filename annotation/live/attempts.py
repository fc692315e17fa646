"""Who acts, and on what: participants (people, agents, the replay) and their attempts.

An attempt belongs to one participant; `attempt_for` is the only way a request or a socket gets
hold of one, and it answers None for anyone but the attempt's own signed-in participant.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User

from annotation.live.frames import Limits
from annotation.models import Attempt, Participant
from puzzles.models import Puzzle


def participant_for_user(*, user: User) -> Participant:
    participant, _ = Participant.objects.get_or_create(user=user, defaults={"kind": Participant.Kind.HUMAN})
    return participant


def system_participant(*, kind: str, label: str) -> Participant:
    """The participant (and its login-less user) that an agent or the replay acts as."""
    username = f"{kind}:{label}"[:150]
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    participant, _ = Participant.objects.get_or_create(user=user, defaults={"kind": kind, "label": label})
    participant.user = user  # loaded now: runners read it later from async code
    return participant


def attempt_start(*, participant: Participant, puzzle: Puzzle) -> Attempt:
    return Attempt.objects.create(participant=participant, puzzle=puzzle)


def attempt_for(*, uid: str, user: User | AnonymousUser) -> Attempt | None:
    """The attempt if it belongs to this signed-in user, else None."""
    if not user.is_authenticated:
        return None
    return Attempt.objects.select_related("puzzle", "study").filter(uid=uid, participant__user=user).first()


def attempt_limits(*, puzzle: Puzzle) -> Limits:
    """What the puzzle's semantic actions may refer to, for frame validation."""
    w, h = puzzle.public["image_size"]
    grid = puzzle.public.get("grid_size")
    return Limits(image_w=w, image_h=h, cells=grid[0] * grid[1] if grid else 0)
