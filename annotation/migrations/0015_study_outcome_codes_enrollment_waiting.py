from django.db import migrations, models

import annotation.models


def own_codes(apps, schema_editor):
    """Each existing study gets codes of its own (AddField's default gives every row the same one)."""
    Study = apps.get_model("annotation", "Study")
    for study in Study.objects.all():
        study.no_places_code = annotation.models.new_completion_code()
        study.screened_out_code = annotation.models.new_completion_code()
        study.failed_gold_code = annotation.models.new_completion_code()
        study.save(update_fields=["no_places_code", "screened_out_code", "failed_gold_code"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0014_attempt_position"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="no_places_code",
            field=models.CharField(
                default=annotation.models.new_completion_code,
                help_text="for people who find no place left",
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="screened_out_code",
            field=models.CharField(
                default=annotation.models.new_completion_code,
                help_text="for people whose screen is too small (device check)",
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="failed_gold_code",
            field=models.CharField(
                default=annotation.models.new_completion_code,
                help_text="for people excluded for failing gold puzzles",
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="enrollment",
            name="waiting_since",
            field=models.DateTimeField(
                blank=True,
                help_text="found no free place since then; after the hold time, the no-places code",
                null=True,
            ),
        ),
        migrations.RunPython(own_codes, migrations.RunPython.noop),
    ]
