"""Each load of an attempt's page numbers its batches in a range of its own (Attempt.pages_served,
live/frames.py SEQ_BLOCK), and batches that reached the server but were not stored are named on
the attempt (Attempt.unstored_batches). An attempt that already holds batches had its first page
(numbers 1, 2, ...): its next load takes the next range."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0020_study_gold_screen_out_time_outs")]

    operations = [
        migrations.AddField(
            model_name="attempt",
            name="pages_served",
            field=models.PositiveIntegerField(
                default=0, help_text="loads of its page so far; each numbers its batches in a range of its own"
            ),
        ),
        migrations.AddField(
            model_name="attempt",
            name="unstored_batches",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="batches that reached the server and were not stored: [{seq, events, why}] "
                "(closed, seq_conflict)",
            ),
        ),
        migrations.RunSQL(
            "UPDATE annotation_attempt SET pages_served = 1 WHERE max_seq > 0", reverse_sql=migrations.RunSQL.noop
        ),
    ]
