"""The invite link of a full study, opened by an account holder who is enrolled and holds places."""

import pytest
from django.test import Client

from annotation.models import Enrollment, Study
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next, study_has_free_place
from annotation.studies.setup import study_create

pytestmark = pytest.mark.django_db


def test_an_enrolled_account_holder_is_not_told_a_full_study_is_full(verified, person):
    """Two places, one each: "first" (a password account) and "second" hold them, so the study is
    full for newcomers, but not for "first", who is shown the consent and may start (was: "every
    place is taken" and a 409 on the start button)."""
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="Full", split="test", puzzles_per_annotator=1)
    holders = []
    for name in ("first", "second"):
        user, _ = person(name)
        enrollment = enrollment_join(study=study, user=user, external_ids={})
        enrollment_consent(enrollment=enrollment)
        assert enrollment_next(enrollment=enrollment).kind == "attempt"
        holders.append(user)
    assert not study_has_free_place(Study.objects.get(pk=study.pk))
    first = Client()
    first.force_login(holders[0])
    shown = first.get(f"/s/{study.token}/").content.decode()
    assert 'id="no-places"' not in shown
    started = first.post(f"/s/{study.token}/")
    assert started.status_code == 302 and started["Location"].endswith(f"/s/{study.token}/next/")
    assert Enrollment.objects.filter(study=study).count() == 2
    newcomer, _ = person("third")
    late = Client()
    late.force_login(newcomer)
    assert 'id="no-places"' in late.get(f"/s/{study.token}/").content.decode()
