"""A study's settings, each declared once: the Study field, the admin section that shows it,
whether it may change after opening, and the staff form's field for it (label, help text, bounds).

From STUDY_SETTINGS come the staff form's fields and their order, set-up's keywords (RULES and
DETAILS; a rule left out takes the Study field's default), the edit form's values read back from
a study, and the admin's sections. tests/studies/test_study_settings.py fails when a Study
field is declared nowhere or a list disagrees.

A setting without a form field is not plain: the staff form builds its own (dataset, types,
practice and gold need the bank's choices; quotas are typed as "N per type" and a number beside
each type) and set-up takes it by its own keyword.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import forms

from annotation.models import Study
from puzzles.bank import SPLIT_SIZES

# The admin's sections, in the words it shows; the first has no title.
STUDY = None
SETUP = "Set-up (change it on the study's page while a draft)"
CROWD = "Crowd platform"
CONSENT = "Consent page"
# What a study is and what became of it: no setting, never on the form. people_solvable: the rule
# its pool was drawn by, when set-up was given one (study_setup's keyword; annotation/live/solvable.py).
RECORD = ("status", "is_open", "token", "created_at", "people_solvable")

STANDARD_CONSENT = (
    "We record your clicks, movements, key presses and their timing on the puzzle page, to measure how "
    "people solve these puzzles. We store no name or e-mail; an id from a crowd-work platform, if the link "
    "carries one, is kept to credit your work.\n\n"
    "The records are used for research and published only as anonymous aggregates. Taking part is "
    "voluntary: you may stop at any time."
)


@dataclass(frozen=True)
class Setting:
    """One setting of a study, by its Study field's name."""

    name: str
    section: str | None
    field: forms.Field | None = None  # the staff form's field; None: not plain, the form builds its own
    any_time: bool = False  # what a study says and where it sends people: changeable after opening
    on_form: tuple[str, ...] | None = None  # the form's fields standing for it, when not its own name
    code: bool = False  # a crowd platform's code for one way out of the study; empty on the form: a new one

    @property
    def form_names(self) -> tuple[str, ...]:
        return (self.name,) if self.on_form is None else self.on_form


def _code(label: str, help_text: str) -> forms.CharField:
    return forms.CharField(max_length=32, required=False, label=label, help_text=f"{help_text}; empty: a new one")


def _url(label: str, help_text: str) -> forms.URLField:
    return forms.URLField(max_length=500, assume_scheme="https", required=False, label=label, help_text=help_text)


# Upper bounds on the numbers: past them a number is a form error, not a 500 from PostgreSQL's
# integer column (or `overlap` places per puzzle made one by one).
STUDY_SETTINGS = (
    Setting("name", STUDY, forms.CharField(max_length=200), any_time=True),
    Setting("split", SETUP, forms.ChoiceField(choices=[(s, s) for s in SPLIT_SIZES], initial="test")),
    Setting("dataset", SETUP),
    Setting("types", SETUP),
    Setting("quotas", SETUP, on_form=("per_type",)),  # and a quota_<type> field per type
    Setting(
        "puzzles_per_annotator",
        SETUP,
        forms.IntegerField(min_value=1, max_value=10_000, initial=20, label="Puzzles per person"),
    ),
    Setting(
        "overlap",
        SETUP,
        forms.IntegerField(min_value=1, max_value=1_000, initial=2, help_text="different people who solve each puzzle"),
    ),
    Setting("order", SETUP, forms.ChoiceField(choices=Study.Order.choices)),
    Setting(
        "seed",
        SETUP,
        forms.IntegerField(
            min_value=-(2**31),
            max_value=2**31 - 1,
            initial=0,
            help_text="the same seed draws the same pool in the same order",
        ),
    ),
    Setting("show_verdict", SETUP, forms.BooleanField(required=False, label="Show people whether they were right")),
    Setting(
        "time_limit_s",
        SETUP,
        forms.IntegerField(
            min_value=5,
            max_value=86_400,
            required=False,
            label="Time limit per puzzle (s)",
            help_text="empty: no limit",
        ),
    ),
    Setting(
        "attempts_per_puzzle",
        SETUP,
        forms.IntegerField(
            min_value=1,
            max_value=100,
            initial=1,
            label="Attempts per puzzle (k)",
            help_text="k for Pass@k; 1 for Pass@1. More than 1 needs verdicts shown: a retry offered after a wrong "
            "answer would tell the verdict",
        ),
    ),
    Setting("hold_minutes", SETUP, on_form=()),  # the Study field's default; the admin shows it
    Setting("practice", SETUP),
    Setting("gold", SETUP),
    Setting(
        "gold_screen_out_at",
        SETUP,
        forms.IntegerField(
            min_value=1,
            max_value=100,
            required=False,
            label="Screen out at wrong gold answers",
            help_text="a person who answers this many gold puzzles wrong is screened out at once, with the "
            "failed-gold code; empty: only you decide, on the annotators' page",
        ),
    ),
    # One code per way out, as Prolific asks for them: give each to Prolific, or paste Prolific's here.
    Setting(
        "completion_code",
        CROWD,
        _code("Completion code", "shown to people who finish"),
        any_time=True,
        code=True,
    ),
    Setting(
        "no_places_code",
        CROWD,
        _code(
            "No places code",
            "shown instead of the consent page when every place is taken, and to people who found no free "
            "place for longer than the hold time",
        ),
        any_time=True,
        code=True,
    ),
    Setting(
        "screened_out_code",
        CROWD,
        _code("Screened out code", "shown when the device check finds the screen too small for the puzzles"),
        any_time=True,
        code=True,
    ),
    Setting(
        "failed_gold_code",
        CROWD,
        _code(
            "Failed gold code",
            "shown to people screened out by the gold rule, or excluded as “failed gold” on the annotators' page",
        ),
        any_time=True,
        code=True,
    ),
    Setting(
        "return_url",
        CROWD,
        _url(
            "Return URL",
            "where people go when they finish; empty: Prolific's completion page with the code, "
            "for people who came from Prolific",
        ),
        any_time=True,
    ),
    Setting(
        "require_crowd_id",
        CROWD,
        forms.BooleanField(
            required=False,
            label="Require a crowd id",
            help_text="only people whose link carries PROLIFIC_PID or workerId may join",
        ),
    ),
    Setting(
        "researcher",
        CONSENT,
        forms.CharField(max_length=200, required=False, help_text="who runs the study: a person or a lab"),
        any_time=True,
    ),
    Setting(
        "contact",
        CONSENT,
        forms.CharField(max_length=200, required=False, help_text="an e-mail address or web page for questions"),
        any_time=True,
    ),
    Setting(
        "duration_minutes",
        CONSENT,
        forms.IntegerField(
            min_value=1, max_value=600, required=False, label="Duration (minutes)", help_text="about how long it takes"
        ),
        any_time=True,
    ),
    Setting(
        "consent_text",
        CONSENT,
        forms.CharField(
            required=False,
            widget=forms.Textarea(attrs={"rows": 7, "placeholder": STANDARD_CONSENT}),
            label="Consent text",
            help_text="what people agree to, in paragraphs separated by a blank line; empty: the standard text",
        ),
        any_time=True,
    ),
    Setting(
        "decline_url",
        CONSENT,
        _url("Decline URL", "where someone who does not agree goes, e.g. the platform's page to return the study"),
        any_time=True,
    ),
)

# Plain settings: the form's field is the Study field, read and written by the same name.
PLAIN = tuple(s.name for s in STUDY_SETTINGS if s.field is not None)
ANY_TIME = tuple(s.name for s in STUDY_SETTINGS if s.any_time)
# What a study says to people and where it sends them (its name apart: the services take it on its own).
DETAILS = tuple(name for name in ANY_TIME if name != "name")
# The codes for the ways out of a study, "completion_code" (finishing) first.
CODES = tuple(s.name for s in STUDY_SETTINGS if s.code)
# The plain rules set while a draft: study_setup takes them by name.
RULES = tuple(name for name in PLAIN if name not in ANY_TIME)
# The staff form's fields in page order (the quota_<type> fields follow, one per type).
FORM_ORDER = tuple(name for s in STUDY_SETTINGS for name in s.form_names)


def in_section(section: str | None) -> tuple[str, ...]:
    """The settings an admin section shows, in order."""
    return tuple(s.name for s in STUDY_SETTINGS if s.section == section)


def form_fields(names: tuple[str, ...]) -> dict[str, forms.Field]:
    """The declared form fields of these plain settings (each form copies them)."""
    return {s.name: s.field for s in STUDY_SETTINGS if s.name in names and s.field is not None}
