"""`python manage.py report --study S [--dataset D] [--exclude-trained] --format html|csv|json|md --out FILE`.

A report is a study's; its dataset is the generated bank or an import its pool draws on. A study
on one dataset reports on it; --dataset keeps the report of a study that mixes several to one of
them (the report lists them all under `study.datasets`)."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.management.common import find_study
from annotation.reporting.render import FORMATS, render
from annotation.reporting.reports import study_report
from annotation.studies.setup import study_datasets
from puzzles.selectors import datasets_line


class Command(BaseCommand):
    help = "A study's report: human Pass@1 per type with intervals, times, agreement, agents beside people."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="its id or name")
        parser.add_argument("--dataset", help="only the study's puzzles of this dataset (default: all of them)")
        parser.add_argument(
            "--exclude-trained",
            action="store_true",
            help="leave out the puzzles training environment episodes played (docs/reports.md, contamination)",
        )
        parser.add_argument("--format", choices=list(FORMATS), default="html")
        parser.add_argument("--out", help="file to write (default: standard output)")

    def handle(
        self,
        *args: Any,
        study: str,
        dataset: str | None,
        exclude_trained: bool,
        format: str,
        out: str | None,
        **options: Any,
    ) -> None:
        found = find_study(study)
        datasets = study_datasets(found)
        if dataset and dataset not in datasets:
            raise CommandError(
                f"study {found.name!r} has no puzzles of dataset {dataset!r}; its datasets: {datasets_line(datasets)}"
            )
        if not dataset and len(datasets) > 1:
            self.stderr.write(f"report: the study mixes datasets ({datasets_line(datasets)}); --dataset keeps to one")
        text = render(study_report(study=found, dataset=dataset, exclude_trained=exclude_trained), format)
        if out:
            Path(out).write_text(text, encoding="utf-8")
            self.stdout.write(f"report: {format} written to {out}")
        else:
            self.stdout.write(text)
