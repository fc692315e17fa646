"""Who acts, and on what: participants (people, agents, the replay) and their attempts.

An attempt belongs to one participant; `attempt_for` is the only way a request or a socket gets
hold of one, and it answers None for anyone but the attempt's own signed-in participant.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max, OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.utils import timezone

from annotation.live.frames import MAX_PAGES, SEQ_BLOCK, Limits, page_of
from annotation.live.timing import STATE_KINDS, on_screen_ms
from annotation.models import Attempt, Event, Participant
from puzzles.hosted_names import split_hosted_type
from puzzles.models import Puzzle

# Pauses kept per attempt: past them a pause does not stop the clock (the list stays small).
MAX_PAUSES = 100


def signed_in_user(request: HttpRequest) -> User:
    """The account of a request behind login_required, typed as one (an anonymous visitor never
    gets this far; should one, it is refused)."""
    if not isinstance(request.user, User):
        raise PermissionDenied("sign in first")
    return request.user


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


def attempt_start(*, participant: Participant, puzzle: Puzzle, purpose: str = Attempt.Purpose.SCORED) -> Attempt:
    """A new attempt outside any study. A try of a puzzle from the staff's pages ("Try it", "Try
    one") is PRACTICE: people's scored attempts (human pass rates, labels) must not count it."""
    return Attempt.objects.create(participant=participant, puzzle=puzzle, purpose=purpose)


def attempt_serve(*, attempt: Attempt) -> None:
    """Note when the attempt's puzzle is first served (its page or its page data): its time
    limit and the bound on its durations run from here, by the server's clock. Served again, it
    ends a pause."""
    if attempt.served_at is not None:
        _pause_end(attempt)
        return
    now = timezone.now()
    # Conditional, so two first requests at once keep the earlier moment.
    if Attempt.objects.filter(pk=attempt.pk, served_at__isnull=True).update(served_at=now):
        attempt.served_at = now
    else:
        attempt.served_at = Attempt.objects.values_list("served_at", flat=True).get(pk=attempt.pk)


def attempt_new_page(*, attempt: Attempt) -> int:
    """A load of the attempt's page: the first number of its own range of batch numbers
    (frames.SEQ_BLOCK), so no two loads, in one browser or two, ever number a batch alike. An
    attempt holding batches from before the ranges had its first page (0). Past MAX_PAGES loads
    the last range is shared (a clash there is refused as seq_conflict and named on the attempt)."""
    if attempt.is_closed:  # the page shows the end state and sends nothing
        return page_of(attempt.max_seq) * SEQ_BLOCK + 1
    with transaction.atomic():
        locked = Attempt.objects.select_for_update(of=("self",)).only("pages_served", "max_seq").get(pk=attempt.pk)
        page = min(max(locked.pages_served, 1 if locked.max_seq else 0), MAX_PAGES - 1)
        Attempt.objects.filter(pk=attempt.pk).update(pages_served=page + 1)
    attempt.pages_served = page + 1
    return page * SEQ_BLOCK + 1


def attempts_pause(*, participant_id: int, study_id: int) -> None:
    """The person opened the Pause page: each of their puzzles in this study on screen and not yet
    answered is paused from now until it is served again (live/timing.py, "On screen")."""
    now_ms = time.time() * 1000
    shown = Attempt.objects.filter(
        participant_id=participant_id,
        study_id=study_id,
        served_at__isnull=False,
        submitted_at__isnull=True,
        abandoned_at__isnull=True,
    )
    with transaction.atomic():
        for attempt in shown.select_for_update():
            pauses = attempt.pauses
            if len(pauses) >= MAX_PAUSES or (pauses and pauses[-1][1] is None):
                continue  # paused already: the earlier start stands
            attempt.pauses = [*pauses, [now_ms, None]]
            attempt.save(update_fields=["pauses"])


def _pause_end(attempt: Attempt) -> None:
    """The puzzle is served again: an open pause ends now."""
    if not (attempt.pauses and attempt.pauses[-1][1] is None):
        return  # the usual serve: no pause, no lock
    with transaction.atomic():
        locked = Attempt.objects.select_for_update().only("pauses").get(pk=attempt.pk)
        pauses = locked.pauses
        if pauses and pauses[-1][1] is None:
            pauses[-1][1] = time.time() * 1000
            Attempt.objects.filter(pk=attempt.pk).update(pauses=pauses)
        attempt.pauses = pauses


def attempt_on_screen_ms(*, attempt: Attempt, until_ms: float) -> float:
    """The time limit's measure from serving to until_ms (live/timing.py, "On screen"), from what
    the attempt's stored batches and pauses show."""
    events = attempt.events.exclude(kind=Event.REFUSED)
    states = list(events.filter(kind__in=STATE_KINDS).order_by("seq", "index"))
    # One receive time a batch; no ordering (the default one joins the attempt and defeats distinct).
    arrivals = list(events.order_by().values_list("received", flat=True).distinct())
    opened_ms = attempt_opened_ms(attempt=attempt)
    return on_screen_ms(states, arrivals, opened_ms=opened_ms, until_ms=until_ms, pauses=attempt.pauses)


def attempt_opened_ms(*, attempt: Attempt) -> float:
    """Epoch ms from which the server times an attempt: when it was served, or, never served,
    when it was made (earlier, so the stricter of the two)."""
    return (attempt.served_at or attempt.created_at).timestamp() * 1000


def attempt_for(*, uid: str, user: User | AnonymousUser) -> Attempt | None:
    """The attempt if it belongs to this signed-in user, else None."""
    if not user.is_authenticated:
        return None
    return Attempt.objects.select_related("puzzle", "study").filter(uid=uid, participant__user=user).first()


def attempt_of_host(*, uid: str) -> Attempt | None:
    """The hosted attempt an attempt's own host names (annotation/attempt_hosts.py: its MAC, checked
    before this, is the credential, as a signed-in user is for attempt_for), or None."""
    attempt = Attempt.objects.select_related("puzzle", "study").filter(uid=uid).first()
    return attempt if attempt is not None and is_hosted(attempt.puzzle) else None


def is_hosted(puzzle: Puzzle) -> bool:
    """A family of a hosted benchmark (docs/hosted.md): its page, verdict and truth are the peer's."""
    return split_hosted_type(puzzle.type) is not None


def attempt_limits(*, puzzle: Puzzle) -> Limits:
    """What the puzzle's semantic actions may refer to, for frame validation. A hosted page has no
    picture or grid of ours: its one semantic action is the recorder's submit."""
    if is_hosted(puzzle):
        return Limits(image_w=0, image_h=0, cells=0)
    w, h = puzzle.public["image_size"]
    grid = puzzle.public.get("grid_size")
    return Limits(image_w=w, image_h=h, cells=grid[0] * grid[1] if grid else 0)


def newest_received() -> Subquery:
    """For an attempt queryset: the receive time (epoch ms) of the attempt's newest batch, read
    through the events' (attempt, seq, index) index, one probe an attempt, never a scan by time.
    The newest batch by number is the last received but for a gap filled late (a resend arriving
    after a later batch), a few seconds at most; nothing is accepted after a submit."""
    newest = Event.objects.filter(attempt=OuterRef("pk")).order_by("-seq", "-index").values("received")[:1]
    return Subquery(newest)


def last_heard(attempts: QuerySet[Attempt]) -> dict[int, datetime]:
    """Per participant with any event: when their page was last heard from on these attempts, the
    latest of their attempts' newest_received(), summed up in the database (a study's events are
    millions; grouping them all took longer than the page allows)."""
    heard = attempts.values("participant_id").annotate(last=Max(newest_received())).order_by()
    return {
        row["participant_id"]: datetime.fromtimestamp(row["last"] / 1000, tz=UTC)
        for row in heard
        if row["last"] is not None
    }
