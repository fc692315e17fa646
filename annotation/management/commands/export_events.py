"""`python manage.py export_events --study S --out FILE`: a study's raw events as JSON lines."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from annotation.management.common import find_study
from annotation.reporting.exports import event_lines


class Command(BaseCommand):
    help = "Write every event of a study's attempts as JSON lines (streamed; schema in docs/events.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="its id or name")
        parser.add_argument("--out", required=True)

    def handle(self, *args: Any, study: str, out: str, **options: Any) -> None:
        count = 0
        with open(out, "w", encoding="utf-8") as handle:
            for line in event_lines(study=find_study(study)):
                handle.write(line)
                count += 1
        self.stdout.write(f"export: {count} events written to {out}")
