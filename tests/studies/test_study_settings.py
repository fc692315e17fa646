"""A study's settings declared once (issue 21): every Study field is a declared setting or part of
the record, and the staff form, set-up, the edit form's values and the admin follow that one
declaration, so a field added to one list and not the others fails here."""

import pytest
from django.contrib import admin

from annotation.models import Study
from annotation.studies.setup import study_create, study_update
from annotation.studies.staff_views import StudyDetailsForm, StudyForm, _initial
from annotation.studies.study_settings import ANY_TIME, FORM_ORDER, RECORD, RULES, SETUP, STUDY_SETTINGS, in_section
from puzzles.registry import registry

pytestmark = pytest.mark.django_db
DECLARED = {s.name: s for s in STUDY_SETTINGS}


def study_fields() -> list[str]:
    """Every field of a Study, its id apart."""
    return [f.name for f in [*Study._meta.fields, *Study._meta.many_to_many] if f.name != "id"]


def settings_of(study: Study) -> dict:
    """Each declared setting's value as stored (practice and gold by uid)."""
    study = Study.objects.get(pk=study.pk)
    values = {name: getattr(study, name) for name in DECLARED if name not in ("practice", "gold")}
    return values | {name: sorted(getattr(study, name).values_list("uid", flat=True)) for name in ("practice", "gold")}


def posted(initial: dict) -> dict:
    """What a browser posts back for a form showing these initial values, unchanged."""
    data = {}
    for key, value in initial.items():
        if key in ("practice", "gold"):
            data[key] = [p.uid for p in value]
        elif value is True:
            data[key] = "on"
        elif value is not None and value is not False:
            data[key] = value
    return data


def test_every_study_field_is_declared_once_as_a_setting_or_the_record():
    assert sorted([*DECLARED, *RECORD]) == sorted(study_fields())
    assert len(DECLARED) == len(STUDY_SETTINGS)


def test_the_form_has_each_declared_field_in_the_declared_order():
    form = StudyForm()
    quota_fields = [name for name in form.fields if name.startswith("quota_")]
    assert [name for name in form.fields if name not in quota_fields] == list(FORM_ORDER)
    assert quota_fields == [f"quota_{name}" for name in registry().names()]
    assert list(StudyDetailsForm().fields) == list(ANY_TIME)
    for name, setting in DECLARED.items():
        if setting.field is not None:  # the declared field, not one the form class shadows it with
            shown = form.fields[name]
            assert (type(shown), shown.label, shown.help_text) == (
                type(setting.field),
                setting.field.label,
                setting.field.help_text,
            )


def test_the_pages_render_every_form_field(verified, staff):
    verified(types=("Dice_Count",), per_type=1)
    page = staff.get("/studies/new/").content.decode()
    assert [name for name in FORM_ORDER if f'name="{name}"' not in page] == []
    study = study_create(name="Opened", split="test", puzzles_per_annotator=1)
    opened = staff.get(f"/studies/{study.pk}/edit/").content.decode()
    assert [name for name in ANY_TIME if f'name="{name}"' not in opened] == []


def test_a_draft_posted_back_unchanged_keeps_every_setting(verified):
    bank = verified(types=("Dice_Count", "Bingo"), per_type=4)
    dice, bingo = bank[4], bank[0]
    study = study_create(
        name="Every setting",
        status=Study.Status.DRAFT,
        split="test",
        dataset="generated:5",
        types=["Bingo", "Dice_Count"],
        quotas={"Bingo": 2, "Dice_Count": 3},
        puzzles_per_annotator=3,
        overlap=2,
        order=Study.Order.BLOCKED,
        seed=7,
        show_verdict=True,
        time_limit_s=60,
        attempts_per_puzzle=2,
        practice=[dice],
        gold=[bingo],
        gold_screen_out_at=1,
        require_crowd_id=True,
        completion_code="CODE7",
        return_url="https://example.org/back",
        researcher="Ada",
        contact="ada@example.org",
        duration_minutes=12,
        consent_text="Agree.",
        decline_url="https://example.org/no",
    )
    Study.objects.filter(pk=study.pk).update(hold_minutes=45)
    before = settings_of(study)
    stored = [name for name in DECLARED if name not in ("practice", "gold")]
    defaults = {name: Study._meta.get_field(name).get_default() for name in stored}
    assert [name for name, value in defaults.items() if before[name] == value] == []  # each one tells

    form = StudyForm(posted(_initial(study)))
    assert form.is_valid(), form.errors
    study_update(study, **form.setup())
    assert settings_of(study) == before


def test_set_up_takes_the_declared_rules_and_fills_the_others_from_the_study_fields(verified):
    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="Defaults", split="test", puzzles_per_annotator=1)
    left_out = [name for name in RULES if name not in ("split", "puzzles_per_annotator")]
    assert {name: getattr(study, name) for name in left_out} == {
        name: Study._meta.get_field(name).get_default() for name in left_out
    }
    with pytest.raises(TypeError, match="missing study settings: split"):
        study_create(name="No split", puzzles_per_annotator=1)
    with pytest.raises(TypeError, match="unknown study settings: hold_minutes"):
        study_create(name="Held", split="test", puzzles_per_annotator=1, hold_minutes=5)


def test_the_admin_shows_each_study_field_once_and_set_up_read_only():
    model_admin = admin.site._registry[Study]
    shown = [name for _, options in model_admin.fieldsets for name in options["fields"]]
    assert sorted(shown) == sorted(study_fields())
    assert set(in_section(SETUP)) <= set(model_admin.readonly_fields)
    assert set(model_admin.readonly_fields).isdisjoint(ANY_TIME)
