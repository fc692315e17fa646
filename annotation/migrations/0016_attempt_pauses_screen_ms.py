from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0015_study_outcome_codes_enrollment_waiting"),
    ]

    operations = [
        migrations.AddField(
            model_name="attempt",
            name="pauses",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="[start, end] epoch ms: the Pause page served, the puzzle served again (end null: paused)",
            ),
        ),
        migrations.AddField(
            model_name="attempt",
            name="screen_ms",
            field=models.FloatField(
                help_text="serving to submit by the server's clock, less the pauses and hidden spells it saw",
                null=True,
            ),
        ),
    ]
