"""Staff pages for studies: the list with invite links and downloads, creating one, and the
annotators' quality table with exclusion."""

from django import forms
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Enrollment, Study
from annotation.reporting.render import FORMATS as REPORT_FORMATS
from annotation.studies.quality import annotator_table, enrollment_exclude, enrollment_include
from annotation.studies.setup import (
    StudySetupError,
    mixed_datasets_warning,
    public_truth_counts,
    public_truth_warning,
    study_create,
)
from puzzles.bank import SPLIT_SIZES
from puzzles.models import Puzzle
from puzzles.registry import registry


class StudyForm(forms.Form):
    name = forms.CharField(max_length=200)
    split = forms.ChoiceField(choices=[(s, s) for s in SPLIT_SIZES], initial="test")
    dataset = forms.ChoiceField(
        required=False,
        help_text="the generated bank or one imported dataset; every dataset of the split mixes them (and says so)",
    )
    types = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, help_text="none ticked: every type"
    )
    puzzles_per_annotator = forms.IntegerField(min_value=1, initial=40)
    overlap = forms.IntegerField(min_value=1, initial=2, help_text="distinct annotators per puzzle")
    order = forms.ChoiceField(choices=Study.Order.choices)
    seed = forms.IntegerField(initial=0)
    show_verdict = forms.BooleanField(required=False)
    time_limit_s = forms.IntegerField(min_value=5, required=False, label="Time limit per puzzle (s)")
    attempts_per_puzzle = forms.IntegerField(min_value=1, initial=1, label="Attempts per puzzle (k)")
    practice = forms.CharField(required=False, help_text="puzzle uids, space separated (not scored)")
    gold = forms.CharField(required=False, help_text="puzzle uids, space separated (quality control)")
    pool_size = forms.IntegerField(min_value=1, required=False, help_text="cap on the pool; empty for all")
    require_crowd_id = forms.BooleanField(
        required=False, help_text="only people whose link carries PROLIFIC_PID or workerId may join"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["types"].choices = [(n, n) for n in registry().names()]
        datasets = [(name, f"{name} ({counts})") for name, counts in _verified_datasets()]
        self.fields["dataset"].choices = [("", "every dataset of the split"), *datasets]

    def puzzles(self, field: str) -> list[Puzzle]:
        uids = self.cleaned_data[field].split()
        found = list(Puzzle.objects.filter(uid__in=uids))
        missing = set(uids) - {p.uid for p in found}
        if missing:
            raise StudySetupError(f"no puzzle with uid {', '.join(sorted(missing))}")
        return found


@staff_member_required
def study_list(request):
    studies = Study.objects.annotate(
        enrolled=Count("enrollments", distinct=True),
        slots_total=Count("slots", distinct=True),
        slots_done=Count("slots", filter=Q(slots__done=True), distinct=True),
    )
    studies = list(studies)
    public_truth = public_truth_counts([s.pk for s in studies])
    for study in studies:
        study.public_truth = public_truth.get(study.pk, 0)  # marked in the list: answers a lookup away
    return render(request, "annotation/study_list.html", {"studies": studies, "formats": list(REPORT_FORMATS)})


@staff_member_required
def study_new(request):
    form = StudyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            study = study_create(
                name=data["name"],
                split=data["split"],
                types=data["types"] or None,
                puzzles_per_annotator=data["puzzles_per_annotator"],
                overlap=data["overlap"],
                order=data["order"],
                seed=data["seed"],
                show_verdict=data["show_verdict"],
                time_limit_s=data["time_limit_s"],
                attempts_per_puzzle=data["attempts_per_puzzle"],
                practice=form.puzzles("practice"),
                gold=form.puzzles("gold"),
                pool_size=data["pool_size"],
                require_crowd_id=data["require_crowd_id"],
                dataset=data["dataset"] or None,
            )
        except StudySetupError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Study “{study.name}” created: {study.slots.count()} places to fill.")
            for warning in (public_truth_warning(study), mixed_datasets_warning(study)):
                if warning:
                    messages.warning(request, f"Study “{study.name}”: {warning}")
            return redirect("annotation:studies")
    context = {"form": form, "public_truth": _public_truth_by_split(), "datasets": _verified_datasets()}
    return render(request, "annotation/study_new.html", context)


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


@staff_member_required
def study_annotators(request, study_id: int):
    study = get_object_or_404(Study, pk=study_id)
    return render(request, "annotation/study_annotators.html", {"study": study, "rows": annotator_table(study=study)})


@staff_member_required
@require_POST
def annotator_exclusion(request, study_id: int, enrollment_id: int):
    enrollment = get_object_or_404(Enrollment, pk=enrollment_id, study_id=study_id)
    if request.POST.get("action") == "exclude":
        enrollment_exclude(enrollment=enrollment, by=request.user, reason=request.POST.get("reason") or "excluded")
        messages.success(request, "Excluded: their attempts are kept and left out of reports.")
    else:
        enrollment_include(enrollment=enrollment, by=request.user)
        messages.success(request, "Included again.")
    return redirect("annotation:study-annotators", study_id=study_id)
