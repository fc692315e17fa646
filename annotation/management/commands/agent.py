"""`python manage.py agent run|runs|export|import`: agents on the live page, scored like people.

run     a new run (or --resume one): k rollouts on each chosen puzzle, through a protocol
runs    the runs stored, with their counts
export  a run in the published client's output layout
import  an output folder (the published client's, or an export) as a run
"""

import os
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.agents.context import CONTEXTS
from annotation.agents.prompts import PromptError, PromptSource
from annotation.agents.protocols import PROTOCOLS
from annotation.agents.published import DEFAULT_PAGE
from annotation.live.solvable import ARC_AGI_2, SolvableRule, solvable_selection
from annotation.models import AgentRun, Rollout
from puzzles.bank import SPLIT_SIZES
from puzzles.models import Puzzle
from puzzles.progress import Progress
from puzzles.registry import UnknownPuzzleType

NATIVE = "captchaarena-native"


class Command(BaseCommand):
    help = "Run agents on stored puzzles through the live page; list, export and import runs."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        self._run_arguments(actions.add_parser("run", help="k rollouts on each of N puzzles, as one run"))
        actions.add_parser("runs", help="the runs stored, with their counts")
        export = actions.add_parser("export", help="a run in the published client's output layout")
        export.add_argument("run", help="run name or id")
        export.add_argument("out", help="folder to write (made if missing)")
        imp = actions.add_parser("import", help="an output folder (published client or export) as a run")
        imp.add_argument("path")
        imp.add_argument("--name", required=True, help="a name for the run, shown in reports")
        imp.add_argument("--dataset", help="match puzzles within this dataset only")

    def _run_arguments(self, run: CommandParser) -> None:
        run.add_argument("--protocol", choices=list(PROTOCOLS), help="how the model is asked (required for a new run)")
        run.add_argument("--model", help="model name sent to the server")
        run.add_argument("--base-url", help="chat completions server, e.g. http://127.0.0.1:8000/v1")
        run.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable with the key")
        run.add_argument("--system-prompt-file", help="the trained system prompt, sent byte for byte")
        run.add_argument("--captchaarena-client", help="a checkout of the public client: its prompt builder is used")
        run.add_argument("--prompt-page", default=DEFAULT_PAGE, help="page base URL the client's prompt names")
        run.add_argument("--split", choices=list(SPLIT_SIZES))
        run.add_argument("--dataset", help="the puzzles' dataset (needed when the split holds several)")
        run.add_argument("--types", nargs="+")
        run.add_argument("--limit", type=int, help="puzzles in total (types interleaved)")
        run.add_argument("--per-type", type=int, help="puzzles per type")
        run.add_argument("--verified-only", action="store_true", help="only replay-verified puzzles")
        run.add_argument(
            "--people-solvable",
            nargs="?",
            const=ARC_AGI_2.spec,
            metavar="PEOPLE:ATTEMPTS",
            help=f"only puzzles that many people solved within that many attempts each (alone: {ARC_AGI_2.spec}, "
            "ARC-AGI-2's), before --per-type and --limit",
        )
        run.add_argument("--rollouts", type=int, default=1, help="k: rollouts per puzzle (for Pass@k)")
        run.add_argument("--context", choices=list(CONTEXTS), default="published", help="history sent per request")
        run.add_argument("--max-steps", type=int, default=30, help="model calls per rollout")
        run.add_argument("--max-tokens", type=int, default=12000)
        run.add_argument("--retries", type=int, default=2, help="retries of a failed model request")
        run.add_argument("--timeout", type=float, default=600.0, help="seconds per model request")
        run.add_argument("--disable-thinking", action="store_true", help="chat_template_kwargs enable_thinking false")
        run.add_argument("--name", help="the run's name (default: model, protocol, split and time)")
        run.add_argument(
            "--workers", type=int, default=2, help="pages in parallel, so as many model calls in flight at once"
        )
        run.add_argument("--resume", metavar="RUN", help="continue a run (name or id): its pending rollouts")
        run.add_argument("--retry-failed", action="store_true", help="with --resume: its failed rollouts too")
        run.add_argument(
            "--on-workers",
            action="store_true",
            help="as a job split into chunks of 10 rollouts on the Celery workers (REDIS_URL), each chunk with "
            "--workers pages; each worker needs the key in its own --api-key-env (docs/jobs.md)",
        )

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            getattr(self, f"do_{action}")(**options)
        except (UnknownPuzzleType, PromptError) as error:
            raise CommandError(str(error)) from None

    # --- run ------------------------------------------------------------------------------
    def do_run(self, *, resume: str | None, retry_failed: bool, workers: int, on_workers: bool, **options: Any) -> None:
        from annotation.agents.runs import run_execute

        run = find_run(resume) if resume else self._new_run(options)
        if run.source != AgentRun.Source.HARNESS:  # its settings hold no model server to call
            raise CommandError(
                f"run {run.name!r} holds {run.get_source_display()}, not rollouts of `agent run`: it cannot be resumed"
            )
        pending = run.rollouts.filter(status=Rollout.Status.PENDING).count()
        if retry_failed:
            pending += run.rollouts.filter(status=Rollout.Status.FAILED).count()
        self.stderr.write(f"run {run.pk} {run.name!r}: {len(run.puzzles)} puzzles x {run.rollouts_per_puzzle}")
        if on_workers:
            return self._run_on_workers(run, workers, retry_failed)
        progress = Progress(pending, f"agent {run.protocol}:{run.model}", stream=cast(TextIO, self.stderr._out))
        run_execute(
            run,
            api_key=os.environ.get(run.settings["api_key_env"], ""),
            workers=workers,
            retry_failed=retry_failed,
            on_result=lambda _: progress.advance(),
        )
        progress.close()
        self._summary(run)

    def _run_on_workers(self, run: AgentRun, pages: int, retry_failed: bool) -> None:
        from annotation.tasks import agent_job_start
        from puzzles.jobs.runs import job_ended_done, job_failures, job_watch, started_by_shell

        job = agent_job_start(run, pages=pages, started_by=started_by_shell(), retry_failed=retry_failed)
        job = job_watch(job, f"agent {run.protocol}:{run.model}", self.stdout, self.stderr)
        for line in job_failures(job):
            self.stderr.write(line)
        self._summary(run)
        job_ended_done(job)

    def _new_run(self, options: dict[str, Any]) -> AgentRun:
        from annotation.agents.runs import run_create

        for needed in ("protocol", "model", "base_url", "split"):
            if not options[needed]:
                raise CommandError(f"--{needed.replace('_', '-')} is required for a new run")
        prompt = PromptSource(
            file=options["system_prompt_file"], client=options["captchaarena_client"], page=options["prompt_page"]
        )
        if options["protocol"] == NATIVE and not prompt.given:
            raise CommandError(
                "captchaarena-native sends the trained system prompt, which this project does not hold: "
                "give --system-prompt-file FILE or --captchaarena-client PATH (a checkout of the public client)"
            )
        ids, dataset = self._puzzles(options)
        name = options["name"] or (
            f"{options['model']} {options['protocol']} {options['split']} {datetime.now(UTC):%Y-%m-%d %H:%M:%S}"
        )
        if AgentRun.objects.filter(name=name).exists():
            raise CommandError(f"a run named {name!r} exists; resume it with --resume or choose another --name")
        return run_create(
            name=name,
            model=options["model"],
            base_url=options["base_url"],
            protocol=options["protocol"],
            dataset=dataset,
            split=options["split"],
            puzzle_ids=ids,
            rollouts=options["rollouts"],
            settings={
                "max_steps": options["max_steps"],
                "max_tokens": options["max_tokens"],
                "context": options["context"],
                "retries": options["retries"],
                "timeout_s": options["timeout"],
                "disable_thinking": options["disable_thinking"],
                "api_key_env": options["api_key_env"],
                "prompt": prompt.describe(),
                "people_solvable": options["people_solvable"] or "",
            },
        )

    def _puzzles(self, options: dict[str, Any]) -> tuple[list[int], str]:
        """The run's puzzles, in order, and their one dataset."""
        from puzzles.selectors import puzzle_selection

        split, dataset = options["split"], options["dataset"]
        rule = _solvable_rule(options["people_solvable"])
        per_type = None if rule else options["per_type"]  # the rule first, then so many of each type
        ids = puzzle_selection(split=split, types=options["types"], per_type=per_type, dataset=dataset)
        if rule:
            ids = solvable_selection(ids, rule, per_type=options["per_type"])
        if options["verified_only"]:
            verified = set(
                Puzzle.objects.filter(pk__in=ids, status=Puzzle.Status.VERIFIED).values_list("pk", flat=True)
            )
            ids = [pk for pk in ids if pk in verified]
        if options["limit"] is not None:
            ids = ids[: options["limit"]]
        datasets = sorted(set(Puzzle.objects.filter(pk__in=ids).values_list("dataset", flat=True)))
        if not ids:
            raise CommandError(f"no stored puzzles in split {split!r} for that choice")
        if len(datasets) > 1:
            raise CommandError(f"split {split!r} holds puzzles of several datasets; choose one: --dataset {datasets}")
        return ids, datasets[0]

    def _summary(self, run: AgentRun) -> None:
        rows = run.rollouts.exclude(status=Rollout.Status.PENDING).values_list("puzzle__type", "status", "correct")
        total, failed, no_action, correct = Counter[str](), Counter[str](), Counter[str](), Counter[str]()
        for name, status, right in rows:
            total[name] += 1
            failed[name] += status == Rollout.Status.FAILED
            no_action[name] += status == Rollout.Status.NO_ACTION
            correct[name] += bool(right) and status != Rollout.Status.FAILED
        self.stdout.write(f"{'type':<20} {'rollouts':>8} {'failed':>6} {'no action':>9} {'correct':>7} {'Pass@1':>7}")
        for name in sorted(total):
            counted = total[name] - failed[name]
            rate = f"{correct[name] / counted:>7.1%}" if counted else f"{'–':>7}"
            self.stdout.write(
                f"{name:<20} {total[name]:>8} {failed[name]:>6} {no_action[name]:>9} {correct[name]:>7} {rate}"
            )
        for rollout in run.rollouts.filter(status=Rollout.Status.FAILED)[:5]:
            self.stdout.write(f"failed rollout {rollout.pk}: {rollout.reason}")
        counted = sum(total.values()) - sum(failed.values())
        left_out = f", {sum(failed.values())} failed (left out)" if sum(failed.values()) else ""
        self.stdout.write(f"agent: {sum(correct.values())}/{counted} correct{left_out}")

    # --- runs, export, import ---------------------------------------------------------------
    def do_runs(self, **_: Any) -> None:
        for run in AgentRun.objects.order_by("created_at", "pk"):
            counts = run.counts()
            self.stdout.write(
                f"{run.pk:>4} {run.name!r} {run.source} {run.protocol or '-'} {run.model or '-'} "
                f"k={run.rollouts_per_puzzle} puzzles={len(run.puzzles)} "
                + " ".join(f"{key}={value}" for key, value in counts.items())
            )

    def do_export(self, *, run: str, out: str, **_: Any) -> None:
        from annotation.agents.exports import run_export

        exported = run_export(find_run(run), Path(out))
        for where, why in exported.problems[:20]:
            self.stderr.write(f"left out {where}: {why}")
        if len(exported.problems) > 20:
            self.stderr.write(f"... and {len(exported.problems) - 20} more left out")
        self.stdout.write(f"export: {exported.written} rollouts written to {out}")

    def do_import(self, *, path: str, name: str, dataset: str | None, **_: Any) -> None:
        from annotation.agents.outputs import agent_run_import

        if not Path(path).is_dir():
            raise CommandError(f"{path} is not a folder")
        result = agent_run_import(path=Path(path), name=name, dataset=dataset)
        for where, why in result.problems[:20]:
            self.stderr.write(f"skipped {where}: {why}")
        if len(result.problems) > 20:
            self.stderr.write(f"... and {len(result.problems) - 20} more skipped")
        for entry in result.unmatched[:20]:
            self.stderr.write(f"no stored puzzle for {entry}")
        if len(result.unmatched) > 20:
            self.stderr.write(f"... and {len(result.unmatched) - 20} more without a stored puzzle")
        self.stdout.write(
            f"import: {result.matched} puzzles matched into run {name!r}, {len(result.unmatched)} unmatched"
        )


def _solvable_rule(spec: str | None) -> SolvableRule | None:
    try:
        return SolvableRule.parse(spec) if spec else None
    except ValueError as error:
        raise CommandError(str(error)) from None


def find_run(key: str) -> AgentRun:
    """A run by name, or by id when no run has that name."""
    run = AgentRun.objects.filter(name=key).first()
    if run is None and key.isdigit():
        run = AgentRun.objects.filter(pk=int(key)).first()
    if run is None:
        raise CommandError(f"no run named {key!r}")
    return run
