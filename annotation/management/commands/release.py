"""`python manage.py release build --study S [--study S2 ...] --out DIR`: a human baseline as a
folder to publish (annotation/datasets/release.py; docs/datasets.md, "A release")."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.datasets.release import DEFAULT_LICENCE, FREE_TEXT, ReleaseError, ReleaseOptions, release_build
from annotation.live.solvable import ARC_AGI_2, SolvableRule
from annotation.management.common import find_study


class Command(BaseCommand):
    help = "Build a per-attempt release of studies: tables, data card, checksums."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        build = actions.add_parser("build", help="write the release of one or more studies to a folder")
        build.add_argument("--study", action="append", required=True, help="name or id; repeat for several")
        build.add_argument("--out", required=True, help="the folder to write (made if missing)")
        build.add_argument(
            "--solvable-rule",
            default=ARC_AGI_2.spec,
            help=f"people-solvable: PEOPLE:ATTEMPTS (default {ARC_AGI_2.spec}, ARC-AGI-2's)",
        )
        build.add_argument(
            "--with",
            dest="with_text",
            action="append",
            choices=list(FREE_TEXT),
            default=[],
            help="free text to include, by name (left out otherwise): "
            + "; ".join(f"{k}: {v}" for k, v in FREE_TEXT.items()),
        )
        build.add_argument("--title", default="", help="the data card's title")
        build.add_argument("--licence", default=DEFAULT_LICENCE)
        build.add_argument("--cite", default="", help="how to cite (Markdown); default: a BibTeX entry for the release")
        build.add_argument(
            "--pay", default="", help="what people were paid, for the data card (the platform keeps none)"
        )

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        getattr(self, f"do_{action}")(**options)

    def do_build(self, *, study: list[str], out: str, solvable_rule: str, with_text: list[str], **options: Any) -> None:
        studies = [find_study(ref) for ref in study]
        if len({s.pk for s in studies}) != len(studies):
            raise CommandError("a study is named twice")
        try:
            rule = SolvableRule.parse(solvable_rule)
            chosen = ReleaseOptions(
                solvable_rule=rule,
                with_text=frozenset(with_text),
                title=options["title"],
                licence=options["licence"],
                citation=options["cite"],
                pay=options["pay"],
            )
            release = release_build(studies=studies, out=Path(out), options=chosen)
        except (ValueError, ReleaseError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"release of {', '.join(s.name for s in studies)} in {out}: {release.counts['attempts']} attempts, "
            f"{release.counts['puzzles']} puzzles, {release.counts['agents']} agent rows; "
            f"read back and checked ({len(release.checksums)} files in SHA256SUMS)"
        )
