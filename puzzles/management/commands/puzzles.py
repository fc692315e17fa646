"""`python manage.py puzzles <action>`: the puzzle bank from the command line.

Replay on the live page is the annotation side's `python manage.py replay`: the bank never imports annotation."""

import json
import os
from collections import Counter, defaultdict
from typing import TextIO, cast

from django.core.management.base import BaseCommand, CommandError, OutputWrapper

from puzzles.bank import SPLIT_SIZES, UnknownSplit, bank_key, generate_puzzle
from puzzles.checks import MaskStats, check_job
from puzzles.models import Puzzle
from puzzles.progress import Progress
from puzzles.registry import UnknownPuzzleType, get_type, registry, type_names
from puzzles.types.kinds import MaskPointType
from puzzles.workers import in_workers

SEED_HELP = (
    "another bank of this deployment, for tests and benches: the seed is mixed with PUZZLE_BANK_SECRET, "
    "never used instead of it (default: the deployment's own bank)"
)


ON_WORKERS_HELP = (
    "as a job split into chunks on the Celery workers (REDIS_URL), with its progress here and on the staff "
    "Jobs page; without a broker the chunks run in this process (docs/jobs.md)"
)


class Command(BaseCommand):
    help = "Puzzle bank: list types, generate, self-check, verify answers, mask report, CaptchaArena import/export."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("types", help="the puzzle types, their interaction mode and instruction")

        generate = actions.add_parser("generate", help="generate and store puzzles")
        generate.add_argument("--split", required=True, choices=list(SPLIT_SIZES))
        generate.add_argument("--per-type", type=int, help="puzzles per type (default: the published size)")
        generate.add_argument("--types", nargs="+", help="only these types")
        generate.add_argument("--start", type=int, default=0, help="first index")
        generate.add_argument("--seed", type=int, help=SEED_HELP)
        generate.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
        generate.add_argument("--on-workers", action="store_true", help=ON_WORKERS_HELP)
        generate.add_argument("--chunk-size", type=int, help="puzzles a chunk with --on-workers (default: 50)")

        selfcheck = actions.add_parser("selfcheck", help="check that truths verify and perturbations fail")
        selfcheck.add_argument("--per-type", type=int, default=50)
        selfcheck.add_argument("--types", nargs="+")
        selfcheck.add_argument("--seed", type=int, help=SEED_HELP)
        selfcheck.add_argument("--workers", type=int)

        verify = actions.add_parser("verify", help="verify an answer to a stored puzzle; prints the verdict as JSON")
        verify.add_argument("type")
        verify.add_argument("puzzle_id", help="the puzzle's uid, or its source id (index or published id)")
        verify.add_argument("answer", help="the answer as JSON, e.g. '[320, 200]'")

        report = actions.add_parser("mask-report", help="mask against bounding box, per mask type")
        report.add_argument("--split", choices=list(SPLIT_SIZES))
        report.add_argument(
            "--generate",
            type=int,
            metavar="N",
            help="measure N freshly generated puzzles per type instead of the stored ones",
        )

        imp = actions.add_parser(
            "import-captchaarena", help="import a dataset in the published layout (a re-run skips what is stored)"
        )
        imp.add_argument("path")
        imp.add_argument("--name", help="dataset name: import:<name> (default: the folder's name)")
        imp.add_argument(
            "--split",
            choices=list(SPLIT_SIZES),
            help="import the folder as this split's folder, whatever its name (the published server's "
            "captcha_data); by default the folder is Train, Val, Validation or Test, or holds them",
        )
        imp.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
        imp.add_argument(
            "--on-workers", action="store_true", help=ON_WORKERS_HELP + "; the folder must be at the same path there"
        )
        imp.add_argument("--chunk-size", type=int, help="entries a chunk with --on-workers (default: 100)")
        truth = imp.add_mutually_exclusive_group()
        truth.add_argument(
            "--public-truth",
            dest="truth_public",
            action="store_true",
            default=True,
            help="its answers are published, as the CaptchaArena splits are (the default): studies on it warn",
        )
        truth.add_argument(
            "--private-truth",
            dest="truth_public",
            action="store_false",
            help="its answers were never published anywhere",
        )

        exp = actions.add_parser("export-captchaarena", help="export the bank in the published layout")
        exp.add_argument("path")
        exp.add_argument("--split", required=True, choices=list(SPLIT_SIZES))
        exp.add_argument("--types", nargs="+")
        exp.add_argument("--dataset", help="which dataset to export (default: the generated bank)")
        exp.add_argument("--workers", type=int, help="worker processes (default: CPU count)")

    def handle(self, *args, action, **options):
        handler = getattr(self, "do_" + action.replace("-", "_"))
        try:
            handler(**options)
        except (UnknownPuzzleType, UnknownSplit) as error:
            raise CommandError(str(error)) from None

    # --- actions ---------------------------------------------------------------------------
    def do_types(self, **_):
        rows = [t.describe() for t in registry().all()]
        width = max(len(r["name"]) for r in rows)
        for row in rows:
            submit = "auto-submit" if row["auto_submit"] else "submit"
            self.stdout.write(
                f"{row['name']:<{width}}  {row['mode']:<8} {row['widget']:<7} {submit:<11} {row['instruction']}"
            )
        self.stdout.write(f"{len(rows)} types")

    def do_generate(self, *, split, per_type, types, start, seed, workers, on_workers, chunk_size, **_):
        from puzzles.encoding import GenerationFailed
        from puzzles.services import bank_generate

        if on_workers:
            return self._generate_on_workers(split, per_type, types, start, seed, chunk_size)
        count = (per_type if per_type is not None else SPLIT_SIZES[split]) * len(type_names(types))
        progress = Progress(count, f"generate {split}", stream=_unwrapped(self.stderr))
        try:
            result = bank_generate(
                split=split,
                per_type=per_type,
                types=types,
                bank_seed=seed,
                start=start,
                workers=workers,
                on_progress=progress.advance,
            )
        except GenerationFailed as error:
            raise CommandError(str(error)) from error
        finally:
            progress.close()
        self.stdout.write(f"generate: {result.created} created, {result.skipped} already stored")
        self.stdout.write(f"dataset: {bank_key(seed).label}")

    def _generate_on_workers(self, split, per_type, types, start, seed, chunk_size):
        from puzzles.jobs.runs import job_ended_done, job_failures, job_watch, started_by_shell
        from puzzles.tasks import GENERATE_CHUNK, generate_job_start

        job = generate_job_start(
            split=split,
            per_type=per_type,
            types=types,
            start=start,
            bank_seed=seed,
            started_by=started_by_shell(),
            chunk_size=chunk_size or GENERATE_CHUNK,
        )
        job = job_watch(job, f"generate {split}", self.stdout, self.stderr)
        for line in job_failures(job):
            self.stderr.write(line)
        self.stdout.write(f"generate: job {job.pk} {job.state}, {job.done}/{job.total} stored or already stored")
        self.stdout.write(f"dataset: {bank_key(seed).label}")
        job_ended_done(job)

    def _import_on_workers(self, plan, chunk_size):
        """The plan's entries as a job: what the plan found broken is named here, what the workers
        find broken on the job's chunks."""
        from puzzles.jobs.runs import job_ended_done, job_failures, job_watch, started_by_shell
        from puzzles.tasks import IMPORT_CHUNK, import_job_start

        for message in plan.broken:
            self.stderr.write(f"skipped: {message}")
        if not plan.total:
            self.stdout.write(f"import: 0 imported, {plan.skipped} already there, {len(plan.broken)} broken")
            return
        job = import_job_start(plan, started_by=started_by_shell(), chunk_size=chunk_size or IMPORT_CHUNK)
        job = job_watch(job, "import", self.stdout, self.stderr)
        failures = job_failures(job)
        for line in failures:
            self.stderr.write(f"skipped: {line}")
        imported = job.done - job.failed  # entries another delivery had stored count here too
        self.stdout.write(
            f"import: job {job.pk} {job.state}, {imported} imported, {plan.skipped} already there, "
            f"{len(plan.broken) + job.failed} broken"
        )
        job_ended_done(job)

    def do_selfcheck(self, *, per_type, types, seed, workers, **_):
        names = type_names(types)
        bank = bank_key(seed)
        jobs = [(name, i, bank) for name in names for i in range(per_type)]
        progress = Progress(len(jobs), "selfcheck", stream=_unwrapped(self.stderr))
        failures: dict[str, list[str]] = defaultdict(list)
        checked: Counter = Counter()
        for name, problems in in_workers(check_job, jobs, workers=workers or os.cpu_count() or 1, ordered=False):
            checked[name] += 1
            failures[name].extend(problems)
            progress.advance()
        progress.close()
        ok_total = 0
        self.stdout.write(f"{'type':<20} {'puzzles':>7} {'ok':>5}  first problem")
        for name in names:
            bad = len({p.split(":")[0] for p in failures[name]})
            ok = checked[name] - bad
            ok_total += ok
            first = failures[name][0] if failures[name] else ""
            self.stdout.write(f"{name:<20} {checked[name]:>7} {ok:>5}  {first[:100]}")
        self.stdout.write(f"selfcheck: {ok_total}/{len(jobs)} puzzles ok")
        if ok_total != len(jobs):
            raise CommandError("selfcheck found problems")

    def do_verify(self, *, type, puzzle_id, answer, **_):
        puzzle_type = get_type(type)
        puzzle = _find_puzzle(puzzle_type.name, puzzle_id)
        try:
            parsed = json.loads(answer)
        except json.JSONDecodeError as error:
            raise CommandError(f"the answer is not valid JSON: {error}") from None
        verdict = puzzle_type.verify(puzzle.truth, parsed, puzzle.load_masks())
        self.stdout.write(json.dumps({"puzzle": puzzle.uid, "type": puzzle.type, **verdict.as_dict()}))

    def do_mask_report(self, *, split, generate, **_):
        mask_types = [t for t in registry().all() if isinstance(t, MaskPointType)]
        self.stdout.write(f"{'type':<18} {'n':>6} {'mask share':>11} {'box share':>10} {'box yes, mask no':>17}")
        for puzzle_type in mask_types:
            stats = MaskStats(puzzle_type.name)
            for truth, masks in _mask_sources(puzzle_type.name, split, generate):
                stats.add(masks[truth["mask"]])
            self.stdout.write(
                f"{stats.type:<18} {stats.puzzles:>6} {stats.mask_share:>11.1%} "
                f"{stats.box_share:>10.1%} {stats.disagreement:>17.1%}"
            )
        self.stdout.write(
            "box yes, mask no: the share of uniformly random clicks on the image that a bounding "
            "box accepts and the mask rejects (exact areas, not sampled)."
        )

    def do_import_captchaarena(self, *, path, name, truth_public, workers, split, on_workers, chunk_size, **_):
        from puzzles.interop import NoSplitFolder, import_plan, import_run

        try:
            plan = import_plan(path, name=name, truth_public=truth_public, split=split)
        except (FileNotFoundError, NoSplitFolder) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"dataset: {plan.dataset} ({plan.total} to import, {plan.skipped} already stored)")
        if on_workers:
            self._import_on_workers(plan, chunk_size)
        else:
            progress = Progress(plan.total, "import", stream=_unwrapped(self.stderr))
            result = import_run(plan, workers=workers, on_progress=progress.advance, warn=self.stderr.write)
            progress.close()
            self.stdout.write(
                f"import: {result.imported} imported, {result.skipped} already there, {len(result.broken)} broken"
            )
        if truth_public:
            self.stdout.write(
                "truth: public (anyone can look these answers up; studies on them warn). "
                "Use --private-truth only for a dataset never published."
            )

    def do_export_captchaarena(self, *, path, split, types, dataset, workers, **_):
        from puzzles.interop import export_captchaarena

        result = export_captchaarena(path, split=split, types=types, dataset=dataset, workers=workers)
        for message in result.refused:
            self.stderr.write(f"skipped: {message}")
        self.stdout.write(f"export: {result.puzzles} puzzles of {result.types} types written to {path}")
        if result.refused:
            self.stdout.write(f"export: {len(result.refused)} puzzles not written (each named above)")


def _unwrapped(wrapper: OutputWrapper) -> TextIO:
    """The stream under a command's OutputWrapper, written to as is (the wrapper would end every
    write with a newline, and a progress bar redraws one line). The stubs omit this private field."""
    return cast(TextIO, wrapper._out)


def _find_puzzle(type_name: str, puzzle_id: str) -> Puzzle:
    found = Puzzle.objects.filter(uid=puzzle_id, type=type_name).first()
    if found:
        return found
    matches = list(Puzzle.objects.filter(type=type_name, source_id__in=[puzzle_id, puzzle_id.zfill(5)])[:5])
    if not matches:
        raise CommandError(f"no {type_name} puzzle with id {puzzle_id!r}")
    if len(matches) > 1:
        listing = ", ".join(f"{p.uid} ({p.dataset} {p.split})" for p in matches)
        raise CommandError(f"{puzzle_id!r} is ambiguous; use one of these uids: {listing}")
    return matches[0]


def _mask_sources(type_name: str, split: str | None, generate: int | None):
    if generate:
        for index in range(generate):
            generated = generate_puzzle(type_name, split or "test", index)
            yield generated.truth, generated.masks
        return
    stored = Puzzle.objects.filter(type=type_name).exclude(status=Puzzle.Status.RETIRED)
    if split:
        stored = stored.filter(split=split)
    for puzzle in stored.iterator(chunk_size=200):
        yield puzzle.truth, puzzle.load_masks()
