"""Who may act as whom in a study: login-less guests from an invite link, and how the same person
comes back.

A crowd id (PROLIFIC_PID, workerId) names a person but is no password: others can know it (a
shared screen, a forwarded link, a researcher). So it is recorded, it keeps one enrolment per
person and study on any device, and on its own it never signs anyone in. What a link with a crowd
id already enrolled gets, on a browser that holds no resume secret:

- a part that ended (finished, or excluded): that outcome and its code, without signing in
  (`queue.enrollment_outcome`). The code is the study's, the same for everyone who leaves that way
  (setup.py, `Study.completion_code` and the others), not a per-person secret, and every finisher
  sees it; the platform pays a code only on the submission of the crowd id it is given with, and
  the researchers check submissions against the people who finished here (the participants'
  export). So the link shows the person the code they are owed, never the no-places code that
  tells them to return the study unpaid, and never the consent page again;
- a part in progress: it is resumed only with the platform's session id of the enrolment
  (SESSION_IDS: Prolific's SESSION_ID, MTurk's assignmentId), stored from the link they joined
  with and matched in full. The platform puts it in the link it gives that person for this study
  alone, so a link that carries both ids comes from the person (or someone they gave their own
  link to, as with the resume link); our pages send no Referer to other sites (Django's
  same-origin policy), so the link does not leave with a click. Without it, or with another one,
  the page says how to continue (the browser they started in, or the resume link of the Pause
  page): never a second enrolment for the same crowd id, and no resume link shown.

Coming back otherwise takes the resume secret that only the annotator has: a signed, per-enrolment
token, in the resume link they are shown and in a cookie of the browser they joined with. Only a
login-less guest of the study resumes by either: never staff or an account with a password.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.core import signing
from django.core.cache import cache
from redis.exceptions import RedisError

from annotation.models import Enrollment, Study

CROWD_IDS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId")
PERSON_IDS = ("PROLIFIC_PID", "workerId")  # the ids that name a person, not a session
# Per person id, the platform's id of that person's session in this study: in the link the platform
# gives them alone, so matching it (stored at enrolment) resumes an attempt on another device.
SESSION_IDS = {"PROLIFIC_PID": "SESSION_ID", "workerId": "assignmentId"}
MAX_CROWD_ID = 100
RESUME_SALT = "annotation.studies.resume"
RESUME_COOKIE_DAYS = 90

log = logging.getLogger(__name__)


# Why a study that is not open takes nobody new, in words for the annotator.
NOT_OPEN: dict[str, str] = {  # by Study.status
    Study.Status.DRAFT: "This study has not started yet. Please come back when the researchers open it.",
    Study.Status.PAUSED: "This study is paused for now. Please come back later with the same link: "
    "anything you did is kept.",
    Study.Status.CLOSED: "This study is closed. Thank you for your interest.",
}


class AccessRefused(ValueError):
    """Joining or resuming is refused; the message says why, in words for the annotator."""


def crowd_ids(query: Mapping[str, str]) -> dict[str, str]:
    """The crowd-platform ids in an invite link's query; printable text only."""
    found = {k: query[k] for k in CROWD_IDS if k in query}
    for key, value in found.items():
        if len(value) > MAX_CROWD_ID or not value.isprintable():
            raise AccessRefused(f"{key} must be printable text of at most {MAX_CROWD_ID} characters")
    return found


def person_id(crowd: Mapping[str, str]) -> str:
    """The id that names the person (PROLIFIC_PID, else workerId), or ""."""
    return next((crowd[k] for k in PERSON_IDS if crowd.get(k)), "")


def crowd_enrollment(*, study: Study, crowd: Mapping[str, str]) -> Enrollment | None:
    """The enrolment in this study of the person the link's crowd id names, if any."""
    person = person_id(crowd)
    if not person:
        return None
    return Enrollment.objects.filter(study=study, crowd_id=person).select_related("study", "participant__user").first()


def session_matches(enrollment: Enrollment, crowd: Mapping[str, str]) -> bool:
    """Whether the link carries the platform session id stored when this person joined: both
    present, the same person id, the same session (compared in constant time)."""
    stored = enrollment.external_ids or {}
    key = next((k for k in PERSON_IDS if stored.get(k)), "")
    if not key or crowd.get(key) != stored[key]:
        return False
    kept, given = str(stored.get(SESSION_IDS[key], "")), crowd.get(SESSION_IDS[key], "")
    return bool(kept) and secrets.compare_digest(kept.encode(), given.encode())


def crowd_resumable_user(*, enrollment: Enrollment, crowd: Mapping[str, str]) -> User | None:
    """The guest behind an enrolment in progress that this link may resume (its crowd id with the
    session id stored at enrolment), or None. Never staff or an account with a password."""
    if not session_matches(enrollment, crowd):
        return None
    return _guest_of(enrollment)


def guest_user(*, study: Study) -> User:
    """A login-less account for someone who joins by invite link (no password: an unusable one)."""
    return get_user_model().objects.create_user(username=f"guest-{study.pk}-{secrets.token_hex(6)}")


def is_guest(user: User, *, study: Study) -> bool:
    return user.username.startswith(f"guest-{study.pk}-")


def join_check(*, study: Study, crowd: Mapping[str, str], anonymous: bool, client: str) -> None:
    """Raise AccessRefused unless this visitor may join now: the study is open, has the crowd id
    it requires, the id is not already someone's here, and anonymous joins stay within the rate."""
    if not study.accepts_work:
        raise AccessRefused(NOT_OPEN[study.status])
    person = person_id(crowd)
    if study.require_crowd_id and not person:
        raise AccessRefused("This study is joined from its crowd-work platform: open the link given there.")
    if person and Enrollment.objects.filter(study=study, crowd_id=person).exists():
        raise AccessRefused(
            "This id already takes part in this study. To continue, open the resume link you were shown."
        )
    if anonymous and not _within_join_rate(study, client):
        raise AccessRefused("Too many people joined from this address just now. Please try again in an hour.")


def _within_join_rate(study: Study, client: str) -> bool:
    """Count a join from this client; False once it is over the hourly allowance."""
    key = f"arena:joins:{study.token}:{client}"
    try:
        cache.add(key, 0, timeout=3600)
        return cache.incr(key) <= settings.ARENA_JOINS_PER_HOUR
    except (RedisError, OSError):
        # The allowance guards against floods; it is not worth a person's place. With the cache away
        # (Redis restarting) the join goes through, and the count starts again when it is back.
        log.warning("join allowance not counted: the cache is unavailable", exc_info=True)
        return True


def client_address(meta: Mapping[str, str]) -> str:
    """The client's address: the connection's, or ARENA_PROXY_HOPS back through X-Forwarded-For
    (only the entries our own proxies appended can be trusted)."""
    hops = settings.ARENA_PROXY_HOPS
    forwarded = [part.strip() for part in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if hops and len(forwarded) >= hops:
        return _without_port(forwarded[-hops])
    return meta.get("REMOTE_ADDR", "")


def _without_port(entry: str) -> str:
    """The host of an X-Forwarded-For entry, without the port some load balancers append
    ("203.0.113.7:51234", "[2001:db8::1]:443"): with it, every connection of one client would
    count as another client (join rates, the consensus audit's people)."""
    if entry.startswith("["):
        return entry[1:].split("]", 1)[0]
    if entry.count(":") == 1:  # an IPv4 address and a port; a bare IPv6 address has several
        return entry.split(":", 1)[0]
    return entry


def resume_token(enrollment: Enrollment) -> str:
    """The annotator's resume secret: signed with the site's key, valid for this enrolment only."""
    return signing.dumps(enrollment.pk, salt=f"{RESUME_SALT}.{enrollment.study.token}")


def resumable_user(*, study: Study, token: str) -> User | None:
    """The guest whose resume token this is, or None. Only a login-less guest of this study
    resumes this way, never an account with a password or staff."""
    try:
        pk = signing.loads(token, salt=f"{RESUME_SALT}.{study.token}", max_age=RESUME_COOKIE_DAYS * 86400)
    except signing.BadSignature:
        return None
    enrollment = Enrollment.objects.filter(pk=pk, study=study).select_related("participant__user", "study").first()
    return None if enrollment is None else _guest_of(enrollment)


def _guest_of(enrollment: Enrollment) -> User | None:
    """The enrolment's user when a login-less guest of its study: nobody else resumes without signing in."""
    user = enrollment.participant.user
    if user.is_staff or user.is_superuser or user.has_usable_password() or not is_guest(user, study=enrollment.study):
        return None
    return user


def resume_cookie(study: Study) -> str:
    return f"arena-resume-{study.token[:8]}"


def enrollment_of(*, user: User | AnonymousUser, study: Study) -> Enrollment | None:
    """The signed-in user's enrollment in the study, if any."""
    if not user.is_authenticated:
        return None
    return Enrollment.objects.filter(study=study, participant__user=user).select_related("study").first()
