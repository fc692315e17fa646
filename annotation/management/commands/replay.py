"""`python manage.py replay --split S [--dataset D] [--on-workers]`: every chosen reference answer acted out on the
live page in Chromium and scored by the server; a puzzle is verified only by the server's own verdict.

The datasets replayed are always named (the generated bank and each import); --dataset keeps to one."""

from collections import Counter
from typing import Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.agents.replay import ReplayOutcome, replay_puzzles
from annotation.tasks import REPLAY_CHUNK, replay_job_start
from puzzles.bank import SPLIT_SIZES
from puzzles.jobs.runs import job_ended_done, job_failures, job_watch, started_by_shell
from puzzles.models import Puzzle, ReplayCheck
from puzzles.progress import Progress
from puzzles.registry import UnknownPuzzleType
from puzzles.selectors import dataset_counts, datasets_line, puzzle_selection


class Command(BaseCommand):
    help = "Replay reference answers on the live page in Chromium; the server's verdict verifies each puzzle."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--split", required=True, choices=list(SPLIT_SIZES))
        parser.add_argument("--types", nargs="+")
        parser.add_argument("--per-type", type=int, help="the first N stored puzzles of each type (default: all)")
        parser.add_argument(
            "--workers", type=int, default=4, help="pages in parallel (default: 4, the fastest on 2 cores)"
        )
        parser.add_argument(
            "--dataset", help="only this dataset: generated:... or import:<name> (default: every dataset, each named)"
        )
        parser.add_argument("--unverified", action="store_true", help="only puzzles not yet verified")
        parser.add_argument(
            "--on-workers",
            action="store_true",
            help="as a job split into chunks on the Celery workers (REDIS_URL), each chunk with --workers pages, "
            "its progress here and on the staff Jobs page; without a broker the chunks run here (docs/jobs.md)",
        )
        parser.add_argument("--chunk-size", type=int, help="puzzles a chunk with --on-workers (default: 10)")

    def handle(
        self,
        *args: Any,
        split: str,
        types: list[str] | None,
        per_type: int | None,
        workers: int,
        dataset: str | None,
        unverified: bool,
        on_workers: bool = False,
        chunk_size: int | None = None,
        **_: Any,
    ) -> None:
        try:
            ids = puzzle_selection(
                split=split, types=types, per_type=per_type, dataset=dataset, unverified_only=unverified
            )
        except UnknownPuzzleType as error:
            raise CommandError(str(error)) from None
        if not ids and unverified:
            self.stdout.write("replay: 0/0 verified (every chosen puzzle is already verified)")
            return
        if not ids:
            held = datasets_line(dataset_counts(Puzzle.objects.filter(split=split)))
            raise CommandError(
                f"no stored puzzles in split {split!r} for that choice (the split holds: {held}); "
                "run `puzzles generate` or `puzzles import-captchaarena` first"
            )
        self.stdout.write(f"datasets: {datasets_line(dataset_counts(Puzzle.objects.filter(pk__in=ids)))}")
        if on_workers:
            self._replay_on_workers(ids, split, workers, chunk_size)
            return
        types_by_id = dict(Puzzle.objects.filter(pk__in=ids).values_list("pk", "type"))
        progress = Progress(len(ids), f"replay {split}", stream=cast(TextIO, self.stderr._out))
        outcomes = replay_puzzles(ids, workers=workers, on_result=lambda _: progress.advance())
        progress.close()
        for line in _replay_table(outcomes, types_by_id):
            self.stdout.write(line)
        verified = sum(o.verified for o in outcomes)
        self.stdout.write(f"replay: {verified}/{len(ids)} verified")

    def _replay_on_workers(self, ids: list[int], split: str, pages: int, chunk_size: int | None) -> None:
        job = replay_job_start(
            ids,
            label=f"replay {split}: {len(ids)} puzzles",
            pages=pages,
            started_by=started_by_shell(),
            chunk_size=chunk_size or REPLAY_CHUNK,
        )
        job = job_watch(job, f"replay {split}", self.stdout, self.stderr)
        for line in job_failures(job):
            self.stdout.write(line)
        verified = ReplayCheck.objects.filter(puzzle_id__in=ids, created_at__gte=job.created_at, verified=True).count()
        self.stdout.write(f"replay: {verified}/{len(ids)} verified (job {job.pk} {job.state})")
        job_ended_done(job)


def _replay_table(outcomes: list[ReplayOutcome], types_by_id: dict[int, str]) -> list[str]:
    """Per type: puzzles, verified, and the first problem seen."""
    totals: Counter = Counter()
    verified: Counter = Counter()
    first_problem: dict[str, str] = {}
    for outcome in outcomes:
        name = types_by_id[outcome.puzzle_id]
        totals[name] += 1
        verified[name] += outcome.verified
        if not outcome.verified:
            first_problem.setdefault(name, outcome.reason)
    lines = [f"{'type':<20} {'puzzles':>7} {'verified':>8}  first problem"]
    for name in sorted(totals):
        lines.append(f"{name:<20} {totals[name]:>7} {verified[name]:>8}  {first_problem.get(name, '')}")
    return lines
