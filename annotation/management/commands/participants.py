"""`python manage.py participants --study S [--out FILE]`: one CSV row per participant of a study.

Crowd ids of every kind (PROLIFIC_PID, workerId...), status, join and last-seen times, accuracy,
gold accuracy, quality marks and completion: what approving and paying people on a crowd platform
needs (docs/reports.md, "Per-participant export"). The staff download is
annotation:study-participants (/studies/<id>/participants.csv)."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from annotation.management.common import find_study
from annotation.studies.exports import participants_csv


class Command(BaseCommand):
    help = "A study's participants as CSV: crowd ids, status, times, accuracy, gold, quality marks, completion."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="its id or name")
        parser.add_argument("--out", help="file to write (default: standard output)")

    def handle(self, *args: Any, study: str, out: str | None, **options: Any) -> None:
        found = find_study(study)
        text = participants_csv(study=found)
        if out:
            Path(out).write_text(text, encoding="utf-8")
            self.stdout.write(f"participants: {text.count(chr(10)) - 1} rows written to {out}")
        else:
            self.stdout.write(text, ending="")
