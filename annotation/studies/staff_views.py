"""Staff pages for studies: the list, creating one (a draft), its page (invite link, completion
code, return URL, open / pause / close, progress, set-up), editing it (everything while a draft,
its wording after), and quality control: the annotators' table with exclusion, and one
annotator's attempts with their answers drawn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.db.models import Count
from django.forms.forms import DeclarativeFieldsMetaclass
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation.models import AuditLog, Enrollment, Study, new_completion_code
from annotation.reporting.render import FORMATS as REPORT_FORMATS
from annotation.studies.access import CROWD_IDS
from annotation.studies.exports import participants_csv
from annotation.studies.quality import (
    STUCK_AFTER,
    annotator_attempts,
    annotator_table,
    enrollment_exclude,
    enrollment_include,
    excluded_places,
    stuck_count,
    thumbnail_urls,
)
from annotation.studies.queue import FAILED_GOLD, study_people_to_recruit
from annotation.studies.setup import (
    RETRIES_NEED_VERDICTS,
    TRANSITIONS,
    StudySetupError,
    mixed_datasets_warning,
    prolific_completion_url,
    public_truth_counts,
    public_truth_warning,
    retries_tell_the_verdict,
    study_create,
    study_details_update,
    study_progress,
    study_set_status,
    study_staffing,
    study_update,
)
from annotation.studies.study_settings import ANY_TIME, CODES, DETAILS, FORM_ORDER, PLAIN, RULES, form_fields
from arena_site.staff import staff_required
from puzzles.bank import SPLIT_SIZES
from puzzles.hosted_names import split_hosted_type
from puzzles.models import Puzzle
from puzzles.registry import registry

PICKER_PER_TYPE = 8  # candidates shown per type in the practice and gold pickers
# The pickers offer practice from the training split first: it keeps the test pool whole.
SPLIT_PREFERENCE = ("train", "val", "test")
PROLIFIC_QUERY = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


class PuzzleChoiceField(forms.ModelMultipleChoiceField):
    """Replay-verified puzzles by uid; empty values are ignored (an empty picker posts one)."""

    def clean(self, value: Any) -> Any:
        return super().clean([v for v in (value or []) if str(v).strip()])


def settings_form(names: tuple[str, ...]) -> type[forms.Form]:
    """A form class whose fields are these plain settings' declared ones (study_settings)."""
    # Form's metaclass, as type(forms.Form) is; to mypy it makes some class, a Form by its base.
    made = DeclarativeFieldsMetaclass("SettingsForm", (forms.Form,), form_fields(names))
    return cast(type[forms.Form], made)


if TYPE_CHECKING:  # mypy takes no class made at run time as a base: to it these are plain forms
    AnyTimeSettingsForm = forms.Form
    RulesSettingsForm = forms.Form
else:
    AnyTimeSettingsForm = settings_form(ANY_TIME)
    RulesSettingsForm = settings_form(RULES)


class StudyDetailsForm(AnyTimeSettingsForm):
    """What a study says and where it sends people: editable whatever its status."""

    def details(self) -> dict[str, Any]:
        """DETAILS as set-up takes them (the text fields come stripped); an empty code gets a new one."""
        data = self.cleaned_data
        return {key: data[key] for key in DETAILS} | {key: data[key] or new_completion_code() for key in CODES}


class StudyForm(StudyDetailsForm, RulesSettingsForm):
    """A study's whole set-up: its pool (per-type quotas), order, rules, practice and gold, wording.
    The plain settings' fields are declared in study_settings; the ones below need the bank."""

    dataset = forms.ChoiceField(
        required=False,
        help_text="the generated bank or one imported dataset; every dataset of the split mixes them (and says so)",
    )
    types = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    per_type = forms.IntegerField(
        min_value=1,
        required=False,
        label="Puzzles per type",
        help_text="N of each type, drawn by seeded sampling; a number beside a type overrides it; "
        "empty: every replay-verified puzzle",
    )
    practice = PuzzleChoiceField(
        queryset=Puzzle.objects.none(), to_field_name="uid", required=False, help_text="shown first, not scored"
    )
    gold = PuzzleChoiceField(
        queryset=Puzzle.objects.none(),
        to_field_name="uid",
        required=False,
        help_text="everyone meets each gold puzzle once, at places and in an order drawn for them, to check attention",
    )
    field_order = FORM_ORDER

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.type_names = registry().names() + hosted_families()
        # This form's copies of the fields declared above, of the kinds declared.
        types, dataset = self.fields["types"], self.fields["dataset"]
        practice, gold = self.fields["practice"], self.fields["gold"]
        assert isinstance(types, forms.ChoiceField) and isinstance(dataset, forms.ChoiceField)
        assert isinstance(practice, PuzzleChoiceField) and isinstance(gold, PuzzleChoiceField)
        types.choices = [(n, n) for n in self.type_names]
        datasets = [(name, f"{name} ({counts})") for name, counts in _verified_datasets()]
        dataset.choices = [("", "every dataset of the split"), *datasets]
        verified = Puzzle.objects.filter(status=Puzzle.Status.VERIFIED)
        practice.queryset = verified
        gold.queryset = verified
        for name in self.type_names:
            self.fields[f"quota_{name}"] = forms.IntegerField(min_value=0, required=False, label=f"{name} quota")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        both = {p.uid for p in data.get("practice") or []} & {p.uid for p in data.get("gold") or []}
        if both:
            self.add_error("gold", f"a puzzle is either practice or gold, not both ({len(both)} ticked as both)")
        k, shown = data.get("attempts_per_puzzle") or 1, bool(data.get("show_verdict"))
        if retries_tell_the_verdict(attempts_per_puzzle=k, show_verdict=shown):
            self.add_error("attempts_per_puzzle", RETRIES_NEED_VERDICTS)
        return data

    def quotas(self) -> dict[str, int] | None:
        """The numbers typed beside types (0 leaves a type out), or None when none were typed."""
        typed = {
            name: self.cleaned_data[f"quota_{name}"]
            for name in self.type_names
            if self.cleaned_data.get(f"quota_{name}") is not None
        }
        return typed or None

    def setup(self) -> dict[str, Any]:
        """The keyword arguments of study_create / study_update. Ticks choose the types (none: every
        type); a number typed beside a type includes it, and overrides N for it (0 leaves it out)."""
        data = self.cleaned_data
        quotas = self.quotas()
        types = list(data["types"])
        if types and quotas:
            types += [name for name, n in quotas.items() if n and name not in types]
        return {
            "name": data["name"],
            **{key: data[key] for key in RULES},
            "dataset": data["dataset"] or None,
            "types": types or None,
            "quotas": quotas,
            "per_type": data["per_type"],
            "practice": list(data["practice"]),
            "gold": list(data["gold"]),
            **self.details(),
        }

    # --- what the template shows --------------------------------------------------------------
    def type_rows(self) -> list[dict[str, Any]]:
        """Per type: its tick box, quota input, instruction, an example image, and the
        replay-verified puzzles of each split."""
        counts: dict[str, dict[str, int]] = {}
        for row in (
            Puzzle.objects.filter(status=Puzzle.Status.VERIFIED)
            .values("type", "split")
            .annotate(n=Count("id"))
            .order_by()
        ):
            counts.setdefault(row["type"], {})[row["split"]] = row["n"]
        boxes = {box.data["value"]: box for box in self["types"]}
        return [
            {
                "name": name,
                "mode": registry().get(name).mode.value if split_hosted_type(name) is None else "the benchmark's page",
                "box": boxes[name],
                "quota": self[f"quota_{name}"],
                "available": [(split, counts.get(name, {}).get(split, 0)) for split in SPLIT_SIZES],
            }
            for name in self.type_names
        ]

    def picker_groups(self) -> list[dict[str, Any]]:
        """Per type, candidate practice and gold puzzles with thumbnails; the ticked ones always."""
        ticked = {"practice": set(self._values("practice")), "gold": set(self._values("gold"))}
        chosen_uids = ticked["practice"] | ticked["gold"]
        verified = Puzzle.objects.filter(status=Puzzle.Status.VERIFIED)
        groups: list[dict[str, Any]] = []  # for the template: "puzzles" holds Puzzles, then their rows
        for name in self.type_names:
            of_type = verified.filter(type=name)
            shown: list[Puzzle] = list(of_type.filter(uid__in=chosen_uids))
            for split in SPLIT_PREFERENCE:
                room = PICKER_PER_TYPE - len(shown)
                if room <= 0:
                    break
                shown += list(of_type.filter(split=split).exclude(uid__in=chosen_uids).order_by("index", "pk")[:room])
            if shown:
                groups.append({"name": name, "puzzles": shown})
        urls = thumbnail_urls([p for g in groups for p in g["puzzles"]])
        for group in groups:
            group["puzzles"] = [
                {
                    "puzzle": p,
                    "url": urls.get(p.pk),
                    "instruction": p.public.get("instruction", ""),
                    "practice": p.uid in ticked["practice"],
                    "gold": p.uid in ticked["gold"],
                }
                for p in group["puzzles"]
            ]
            group["ticked"] = sum(p["practice"] or p["gold"] for p in group["puzzles"])
        return groups

    def _values(self, field: str) -> list[str]:
        if self.is_bound:
            return [v for v in self.data.getlist(field) if v] if hasattr(self.data, "getlist") else []
        return [getattr(p, "uid", p) for p in self.initial.get(field, [])]


def hosted_families() -> list[str]:
    """Hosted benchmarks' families with a verified puzzle (docs/hosted.md): a study may take them
    beside our own types, by their qualified names."""
    verified = Puzzle.objects.filter(status=Puzzle.Status.VERIFIED, dataset__startswith="hosted:")
    return sorted(name for name in verified.values_list("type", flat=True).distinct() if split_hosted_type(name))


# --- the list and creating ------------------------------------------------------------------
@staff_required
def study_list(request: HttpRequest) -> HttpResponse:
    studies = list(Study.objects.all())
    public_truth = public_truth_counts([s.pk for s in studies])
    progress = study_progress(studies)
    for study in studies:
        # Set on the instances for the template; not Study fields, so unknown to mypy.
        # The public-truth count is marked in the list: those answers are a lookup away.
        study.public_truth = public_truth.get(study.pk, 0)  # type: ignore[attr-defined]
        study.progress = progress[study.pk]  # type: ignore[attr-defined]
    return render(request, "annotation/study_list.html", {"studies": studies, "formats": list(REPORT_FORMATS)})


@staff_required
def study_new(request: HttpRequest) -> HttpResponse:
    form = StudyForm(request.POST or None, initial=new_codes())
    if request.method == "POST" and form.is_valid():
        try:
            study = study_create(**form.setup(), status=Study.Status.DRAFT)
        except StudySetupError as error:
            form.add_error(None, str(error))
        else:
            messages.success(
                request,
                f"Draft “{study.name}” saved. Check it, give the crowd platform its completion code, then open it.",
            )
            _warn(request, study)
            return redirect("annotation:study", study_id=study.pk)
    return render(request, "annotation/study_form.html", _form_context(form, study=None))


def new_codes() -> dict[str, str]:
    """A new study's codes, one per way out, each made afresh."""
    return {key: new_completion_code() for key in CODES}


def _warn(request: HttpRequest, study: Study) -> None:
    for warning in (public_truth_warning(study), mixed_datasets_warning(study)):
        if warning:
            messages.warning(request, f"Study “{study.name}”: {warning}")


def _form_context(form: StudyDetailsForm, *, study: Study | None) -> dict[str, Any]:
    return {
        "form": form,
        "study": study,
        "public_truth": _public_truth_by_split(),
        "datasets": _verified_datasets(),
        "full": isinstance(form, StudyForm),
        "type_rows": form.type_rows() if isinstance(form, StudyForm) else [],
        "picker_groups": form.picker_groups() if isinstance(form, StudyForm) else [],
    }


@staff_required
def study_edit(request: HttpRequest, study_id: int) -> HttpResponse:
    """A draft: every setting (its pool drawn again). After opening: what it says and where it sends people."""
    study = get_object_or_404(Study, pk=study_id)
    draft = study.status == Study.Status.DRAFT
    initial = _initial(study) if draft else {key: getattr(study, key) for key in ANY_TIME}
    form_class = StudyForm if draft else StudyDetailsForm
    form = form_class(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            if isinstance(form, StudyForm):  # a draft: every setting
                study = study_update(study, **form.setup())
            else:
                study = study_details_update(study, name=form.cleaned_data["name"], **form.details())
        except StudySetupError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, "Saved." + (" Its pool was drawn again." if draft else ""))
            _warn(request, study)
            return redirect("annotation:study", study_id=study.pk)
    return render(request, "annotation/study_form.html", _form_context(form, study=study))


def _initial(study: Study) -> dict[str, Any]:
    """The form as the study was set up: quotas as "N per type" when they are all equal."""
    quotas = study.quotas or {}
    values = set(quotas.values())
    initial = {key: getattr(study, key) for key in PLAIN} | {
        "dataset": study.dataset,
        "types": study.types,
        "practice": list(study.practice.all()),
        "gold": list(study.gold.all()),
    }
    if len(values) == 1:
        initial["per_type"] = values.pop()
    else:
        initial |= {f"quota_{name}": n for name, n in quotas.items()}
    return initial


# --- one study --------------------------------------------------------------------------------
@staff_required
def study_detail(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    join = request.build_absolute_uri(reverse("annotation:study-join", args=[study.token]))
    staffing = study_staffing(study)
    quotas = study.quotas or {}
    pool_by_type = dict(
        study.slots.values("puzzle__type").annotate(n=Count("puzzle", distinct=True)).values_list("puzzle__type", "n")
    )
    practice, gold = list(study.practice.all()), list(study.gold.all())
    urls = thumbnail_urls(practice + gold)
    context = {
        "study": study,
        "invite_url": join,
        "prolific_url": f"{join}?{PROLIFIC_QUERY}",
        "return_url": study.return_url or prolific_completion_url(study),
        "return_is_default": not study.return_url,
        "staffing": staffing,
        "advice": staffing.advice(),
        "progress": study_progress([study])[study.pk],
        "recruit": study_people_to_recruit(study),
        "excluded": excluded_places(study=study),
        "stuck": stuck_count(study=study),
        "types": sorted(pool_by_type.items()),
        "quotas": quotas,
        "practice": [{"puzzle": p, "url": urls.get(p.pk)} for p in practice],
        "gold": [{"puzzle": p, "url": urls.get(p.pk)} for p in gold],
        "actions": _actions(study),
        "history": AuditLog.objects.filter(study=study).select_related("by")[:20],
        "formats": list(REPORT_FORMATS),
        "public_truth": public_truth_warning(study),
        "mixed": mixed_datasets_warning(study),
    }
    return render(request, "annotation/study_detail.html", context)


# The buttons a study's page offers: (status it moves to, label, what it does).
ACTION_WORDS: dict[str, tuple[str, str]] = {
    Study.Status.OPEN: ("Open", "people can join by the invite link and work"),
    Study.Status.PAUSED: ("Pause", "nobody new joins and nobody gets a new puzzle until you open it again"),
    Study.Status.CLOSED: ("Close", "it ends: nobody joins or gets new work; you can reopen it"),
}


def _actions(study: Study) -> list[dict[str, str]]:
    found = []
    for status in TRANSITIONS.get(study.status, ()):
        label, means = ACTION_WORDS[status]
        if study.status == Study.Status.CLOSED:
            label = "Reopen"
        elif study.status == Study.Status.PAUSED and status == Study.Status.OPEN:
            label = "Resume"
        elif study.status == Study.Status.DRAFT and status == Study.Status.CLOSED:
            label, means = "Discard draft", "it is closed without ever opening"
        found.append({"status": status, "label": label, "means": means})
    return found


@staff_required
@require_POST
def study_trajectories_start(request: HttpRequest, study_id: int) -> HttpResponse:
    """The study page's Export trajectories: its submitted attempts rendered on the workers into a
    new folder under PRIVATE_ROOT (trajectories/study-<id>-<time>), followed on the Jobs page."""
    from django.utils import timezone

    from annotation.tasks import trajectories_job_start  # the browser runner loads with it
    from puzzles.jobs.runs import NothingToDo
    from puzzles.jobs.views import started

    study = get_object_or_404(Study, pk=study_id)
    out = f"trajectories/study-{study.pk}-{timezone.now():%Y%m%d-%H%M%S}"
    try:
        job = trajectories_job_start(study, out, started_by=request.user.get_username())
    except NothingToDo:
        messages.error(request, "Nothing to export: the study has no submitted attempt to render yet.")
        return redirect("annotation:study", study_id=study.pk)
    return started(request, job)


@staff_required
@require_POST
def bank_replay_start(request: HttpRequest) -> HttpResponse:
    """The bank page's Replay-verify: the split's puzzles not yet verified, replayed on the workers
    (here, not in puzzles/jobs: the replay drives the live page, which is this side's)."""
    from annotation.tasks import replay_job_start
    from puzzles.jobs.views import started
    from puzzles.selectors import puzzle_selection

    split = request.POST.get("split", "")
    if split not in SPLIT_SIZES:
        messages.error(request, f"Replay-verify: no split {split!r}")
        return redirect("annotation:jobs")
    ids = puzzle_selection(split=split, unverified_only=True)
    if not ids:
        messages.error(request, f"Nothing to replay: every stored {split} puzzle is verified already.")
        return redirect("annotation:jobs")
    job = replay_job_start(
        ids, label=f"replay {split}: {len(ids)} puzzles", pages=2, started_by=request.user.get_username()
    )
    return started(request, job)


@staff_required
@require_POST
def study_status(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    staff = cast(User, request.user)  # staff_required let only a signed-in staff member this far
    try:
        changed = study_set_status(study, request.POST.get("status", ""), by=staff)
    except StudySetupError as error:
        messages.error(request, f"Not changed: {error}.")
    else:
        messages.success(request, f"The study is {changed.get_status_display()}.")
    return redirect("annotation:study", study_id=study.pk)


def _verified_datasets() -> list[tuple[str, str]]:
    """Each dataset with replay-verified puzzles, and how many per split: the pools a study can draw on."""
    rows = (
        Puzzle.objects.filter(status=Puzzle.Status.VERIFIED)
        .values("dataset", "split")
        .annotate(n=Count("id"))
        .order_by("dataset", "split")
    )
    per_dataset: dict[str, list[str]] = {}
    for row in rows:
        per_dataset.setdefault(row["dataset"], []).append(f"{row['n']} in {row['split']}")
    return [(dataset, ", ".join(counts)) for dataset, counts in per_dataset.items()]


def _public_truth_by_split() -> list[tuple[str, int]]:
    """Replay-verified puzzles with published answers per split: a study drawing on them can warn ahead."""
    rows = (
        Puzzle.objects.filter(status=Puzzle.Status.VERIFIED, truth_public=True)
        .values("split")
        .annotate(n=Count("id"))
        .order_by("split")
    )
    return [(row["split"], row["n"]) for row in rows]


# --- quality control --------------------------------------------------------------------------
@staff_required
def study_annotators(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    rows = annotator_table(study=study)
    context = {
        "study": study,
        "rows": rows,
        "stuck": sum(r["stuck"] for r in rows),
        "stuck_minutes": int(STUCK_AFTER.total_seconds() // 60),
        "crowd_keys": CROWD_IDS,
    }
    return render(request, "annotation/study_annotators.html", context)


@staff_required
def annotator_detail(request: HttpRequest, study_id: int, enrollment_id: int) -> HttpResponse:
    """One annotator: who (crowd ids, device, times) and each of their attempts, answers drawn."""
    enrollment = get_object_or_404(
        Enrollment.objects.select_related("study", "participant__user"), pk=enrollment_id, study_id=study_id
    )
    row = next(r for r in annotator_table(study=enrollment.study) if r["enrollment"].pk == enrollment.pk)
    context = {
        "study": enrollment.study,
        "row": row,
        "attempts": annotator_attempts(enrollment=enrollment),
        "stuck_minutes": int(STUCK_AFTER.total_seconds() // 60),
    }
    return render(request, "annotation/study_annotator.html", context)


@staff_required
@require_POST
def annotator_exclusion(request: HttpRequest, study_id: int, enrollment_id: int) -> HttpResponse:
    enrollment = get_object_or_404(Enrollment, pk=enrollment_id, study_id=study_id)
    staff = cast(User, request.user)  # staff_required let only a signed-in staff member this far
    action = request.POST.get("action")
    if action in ("exclude", "failed_gold"):
        reason = FAILED_GOLD if action == "failed_gold" else request.POST.get("reason") or "excluded"
        places = enrollment_exclude(enrollment=enrollment, by=staff, reason=reason)
        told = " They are shown the failed-gold code." if reason == FAILED_GOLD else ""
        reopened = len(places["reopened"])
        messages.success(
            request,
            f"Excluded: their attempts are kept and left out of reports; their {reopened} "
            f"place{pluralize(reopened)} went back to the queue for someone else.{told}",
        )
    else:
        given_back = enrollment_include(enrollment=enrollment, by=staff)
        back = f" {given_back} answered place{pluralize(given_back)} nobody had taken since are theirs again."
        messages.success(request, "Included again." + (back if given_back else ""))
    back = request.POST.get("next", "")
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        return HttpResponseRedirect(back)
    return redirect("annotation:study-annotators", study_id=study_id)


@staff_required
@never_cache
def participants_download(request: HttpRequest, study_id: int) -> HttpResponse:
    """One CSV row per participant (crowd ids, status, times, accuracy, gold, quality marks,
    completion), for approving and paying people."""
    study = get_object_or_404(Study, pk=study_id)
    response = HttpResponse(participants_csv(study=study), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-participants.csv"'
    return response
