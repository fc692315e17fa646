"""Who may act as whom in a study: login-less guests from an invite link, and the crowd ids
(PROLIFIC_PID, workerId...) that let the same person resume on another device.

A crowd id is not a password: it resumes only a login-less guest of this very study, never an
account with a password, a staff account, or anyone enrolled in another way.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from django.contrib.auth import get_user_model

from annotation.models import Enrollment, Study

CROWD_IDS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId")
RESUME_IDS = ("PROLIFIC_PID", "workerId")  # the ids that name a person, not a session


def crowd_ids(query: Mapping[str, str]) -> dict[str, str]:
    """The crowd-platform ids in an invite link's query, trimmed."""
    return {k: query[k][:100] for k in CROWD_IDS if k in query}


def guest_user(*, study: Study):
    """A login-less account for someone who joins by invite link."""
    user = get_user_model().objects.create_user(username=f"guest-{study.pk}-{secrets.token_hex(6)}")
    user.set_unusable_password()
    user.save(update_fields=["password"])
    return user


def is_guest(user, *, study: Study) -> bool:
    return user.username.startswith(f"guest-{study.pk}-")


def returning_guest(*, study: Study, crowd: dict[str, str]):
    """The guest account this crowd id joined with, to resume on another device, or None."""
    key = next((k for k in RESUME_IDS if crowd.get(k)), None)
    if key is None:
        return None
    found = list(
        Enrollment.objects.filter(study=study, **{f"external_ids__{key}": crowd[key]}).select_related(
            "participant__user"
        )[:2]
    )
    if len(found) != 1:
        return None
    user = found[0].participant.user
    if user.is_staff or user.is_superuser or user.has_usable_password() or not is_guest(user, study=study):
        return None
    return user


def enrollment_of(*, user, study: Study) -> Enrollment | None:
    """The signed-in user's enrollment in the study, if any."""
    if not user.is_authenticated:
        return None
    return Enrollment.objects.filter(study=study, participant__user=user).select_related("study").first()
