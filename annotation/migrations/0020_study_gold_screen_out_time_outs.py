"""A study's gold rule (Study.gold_screen_out_at), and time-outs stored as one outcome: the
verdicts of answers the time limit ended, scored before live/scoring.py stored them as
"timed out", say so now, by the rule the report counts them with (reports.submitted_late)."""

from datetime import timedelta

from django.db import migrations, models
from django.db.models import F, Q
from django.db.models.functions import Coalesce

TIMED_OUT = "timed out"  # live/scoring.py's TIMED_OUT, as it was when this ran
TIME_UP_EARLY_MS, TIME_UP_EARLY_SHARE = 5000.0, 0.25  # live/scoring.py's window, as it was


def _late(limit_s: int) -> Q:
    """The report's rule for a submit at the limit or after it (reports.submitted_late)."""
    limit_ms = limit_s * 1000
    late_ms = limit_ms - min(TIME_UP_EARLY_MS, limit_ms * TIME_UP_EARLY_SHARE)
    by_screen = Q(screen_ms__isnull=False, screen_ms__gte=late_ms)
    return by_screen | Q(screen_ms__isnull=True, submitted_at__gte=F("opened") + timedelta(milliseconds=late_ms))


def time_outs_as_one_outcome(apps, schema_editor):
    Attempt = apps.get_model("annotation", "Attempt")
    Study = apps.get_model("annotation", "Study")
    for study_id, limit_s in Study.objects.filter(time_limit_s__isnull=False).values_list("pk", "time_limit_s"):
        if not limit_s:
            continue
        ended = (
            Attempt.objects.filter(study_id=study_id, submitted_at__isnull=False, correct=False)
            .exclude(reason__startswith=TIMED_OUT)
            .annotate(opened=Coalesce(F("served_at"), F("created_at")))
            .filter(_late(limit_s))
        )
        for attempt in ended.iterator(chunk_size=2000):
            said = f" (the answer then: {attempt.reason})" if attempt.reason else ""
            attempt.reason = f"{TIMED_OUT}: submitted at the {limit_s} s limit{said}"[:300]
            attempt.save(update_fields=["reason"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0019_rollout_player"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="gold_screen_out_at",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="wrong gold answers that screen a person out at once, with the failed-gold code; "
                "empty: only staff decide",
                null=True,
            ),
        ),
        migrations.RunPython(time_outs_as_one_outcome, migrations.RunPython.noop),
    ]
