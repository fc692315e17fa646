"""`python manage.py report --study S --format html|csv|json|md --out FILE`."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from annotation.reporting.render import FORMATS, render
from annotation.reporting.reports import study_report


def find_study(ref: str) -> Study:
    query = Study.objects.filter(pk=int(ref)) if ref.isdigit() else Study.objects.filter(name=ref)
    found = list(query[:2]) or list(Study.objects.filter(token=ref))
    if len(found) != 1:
        raise CommandError(f"no single study named or numbered {ref!r}")
    return found[0]


class Command(BaseCommand):
    help = "A study's report: human Pass@1 per type with intervals, times, agreement, agents beside people."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="its id or name")
        parser.add_argument("--format", choices=list(FORMATS), default="html")
        parser.add_argument("--out", help="file to write (default: standard output)")

    def handle(self, *args, study, format, out, **options):
        text = render(study_report(study=find_study(study)), format)
        if out:
            Path(out).write_text(text, encoding="utf-8")
            self.stdout.write(f"report: {format} written to {out}")
        else:
            self.stdout.write(text)
