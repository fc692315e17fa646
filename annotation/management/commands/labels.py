"""`python manage.py labels export|motion`: puzzle labels as a file; motion, people beside agents.

export  one row per puzzle of a dataset's split (docs/datasets.md), JSON lines, CSV or Parquet,
        with the rules in <out>.rules.json
motion  per type, people's pointer motion beside each agent run's, with the human-likeness score
"""

import time
from collections.abc import Mapping
from typing import Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.datasets.labels import FORMATS, FormatUnavailable, labels_write, puzzle_labels
from annotation.datasets.motion import motion_table
from annotation.live.scoring import attempt_measure_motion, attempts_without_motion
from annotation.live.solvable import ARC_AGI_2, SolvableRule
from annotation.management.common import find_study
from annotation.reporting.motion import COLUMNS
from puzzles.models import Puzzle
from puzzles.progress import Progress


class Command(BaseCommand):
    help = "Puzzle labels for curation and difficulty mining; motion of people and agents side by side."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        export = actions.add_parser("export", help="one row per puzzle of a dataset's split")
        export.add_argument("--dataset", required=True, help="e.g. generated:key-ab12 or import:captcha-arena")
        export.add_argument("--split", required=True)
        export.add_argument("--out", required=True, help="the file to write; the rules go to <out>.rules.json")
        export.add_argument("--format", choices=FORMATS, help="by default from the file's suffix, else jsonl")
        export.add_argument("--study", help="count people's attempts in this study only (name or id)")
        export.add_argument(
            "--solvable-rule",
            default=ARC_AGI_2.spec,
            help="people-solvable: at least PEOPLE people within ATTEMPTS attempts each, as PEOPLE:ATTEMPTS "
            f"(default {ARC_AGI_2.spec}, ARC-AGI-2's)",
        )
        motion = actions.add_parser("motion", help="pointer motion per type: people beside agent runs")
        motion.add_argument("--dataset", required=True)
        motion.add_argument("--split", required=True)
        motion.add_argument("--study", help="people of this study only (name or id)")
        motion.add_argument(
            "--measure", action="store_true", help="first measure attempts scored before motion was kept"
        )

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        getattr(self, f"do_{action}")(**options)

    def do_export(
        self, *, dataset: str, split: str, out: str, format: str | None, study: str | None, solvable_rule: str, **_: Any
    ) -> None:
        fmt = format or next((f for f in FORMATS if out.endswith(f".{f}")), "jsonl")
        _known(dataset, split)
        try:
            rule = SolvableRule.parse(solvable_rule)
        except ValueError as error:
            raise CommandError(str(error)) from None
        started = time.perf_counter()
        labels = puzzle_labels(dataset=dataset, split=split, study_id=_study(study), solvable_rule=rule)
        try:
            sidecar = labels_write(labels, out, fmt)
        except FormatUnavailable as error:
            raise CommandError(str(error)) from None
        counts = labels.meta["counts"]
        self.stdout.write(
            f"{len(labels.rows)} puzzles to {out} ({fmt}) in {time.perf_counter() - started:.2f} s; "
            f"valid {counts['valid']}, suspect {counts['suspect']}, mining {counts['mining']} "
            f"({counts['mining_and_valid']} valid), people-solvable {counts['people_solvable']} ({rule}); "
            f"rules in {sidecar}"
        )

    def do_motion(self, *, dataset: str, split: str, study: str | None, measure: bool, **_: Any) -> None:
        _known(dataset, split)
        if measure:
            self._measure()
        table = motion_table(dataset=dataset, split=split, study_id=_study(study))
        header = ["type", "group", *COLUMNS]
        self.stdout.write("\t".join(header))
        for row in table["rows"] + table["overall"]:
            cells: Mapping[str, object] = row  # read by the column names of the header
            self.stdout.write("\t".join(_cell(cells.get(name)) for name in header))
        self.stdout.write(f"\nhuman-likeness: {table['rule']}")

    def _measure(self) -> None:
        waiting = attempts_without_motion()
        progress = Progress(len(waiting), "motion", stream=cast(TextIO, self.stderr._out))
        for attempt_id in waiting:
            attempt_measure_motion(attempt_id=attempt_id)
            progress.advance()
        progress.close()
        self.stdout.write(f"{len(waiting)} attempts scored before motion was kept, measured")


def _cell(value: object) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _known(dataset: str, split: str) -> None:
    if not Puzzle.objects.filter(dataset=dataset, split=split).exists():
        known = sorted(set(Puzzle.objects.values_list("dataset", "split").distinct()))
        names = ", ".join(f"{d} {s}" for d, s in known) or "none"
        raise CommandError(f"no puzzles in dataset {dataset!r}, split {split!r}; stored: {names}")


def _study(name: str | None) -> int | None:
    return find_study(name).pk if name else None
