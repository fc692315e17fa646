"""`python manage.py agent run`: an agent's rollouts on the live page, scored like people."""

import os
from collections import Counter

from django.core.management.base import BaseCommand, CommandError

from annotation.agents.harness import OpenAIProvider, reference_provider, run_agent
from puzzles.bank import SPLIT_SIZES
from puzzles.models import Puzzle
from puzzles.progress import Progress
from puzzles.registry import UnknownPuzzleType


class Command(BaseCommand):
    help = "Run an agent on stored puzzles through the live page (providers: replay, openai)."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        run = actions.add_parser("run", help="K rollouts on each of N puzzles")
        run.add_argument("--provider", required=True, choices=["replay", "openai"])
        run.add_argument("--model", default="reference", help="model name sent to the server")
        run.add_argument("--base-url", help="chat completions server, e.g. http://127.0.0.1:8001/v1")
        run.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable with the key")
        run.add_argument("--split", required=True, choices=list(SPLIT_SIZES))
        run.add_argument("--types", nargs="+")
        run.add_argument("--limit", type=int, default=10, help="puzzles per type")
        run.add_argument("--rollouts", type=int, default=1, help="attempts per puzzle (for Pass@k)")
        run.add_argument("--workers", type=int, default=2, help="pages in parallel")
        run.add_argument("--verified-only", action="store_true", help="only replay-verified puzzles")

        imp = actions.add_parser("import", help="import a published agent's output folder (summary.json files)")
        imp.add_argument("path")
        imp.add_argument("--name", required=True, help="a name for the run, shown in reports")
        imp.add_argument("--dataset", help="match puzzle ids within this dataset only")

    def handle(self, *args, action, **options):
        try:
            getattr(self, f"do_{action}")(**options)
        except UnknownPuzzleType as error:
            raise CommandError(str(error)) from None

    def do_run(
        self, *, provider, model, base_url, api_key_env, split, types, limit, rollouts, workers, verified_only, **_
    ):
        from puzzles.selectors import puzzle_selection

        if provider == "openai":
            if not base_url:
                raise CommandError("--base-url is required with --provider openai")
            client = OpenAIProvider(base_url=base_url, model=model, api_key=os.environ.get(api_key_env, ""))
            factory = lambda puzzle: client  # noqa: E731  (stateless: the conversation lives in the episode)
        else:
            factory = reference_provider
        ids = puzzle_selection(split=split, types=types, per_type=limit)
        if verified_only:
            ids = list(Puzzle.objects.filter(pk__in=ids, status=Puzzle.Status.VERIFIED).values_list("pk", flat=True))
        if not ids:
            raise CommandError(f"no stored puzzles in split {split!r} for that choice")
        types_by_id = dict(Puzzle.objects.filter(pk__in=ids).values_list("pk", "type"))
        progress = Progress(len(ids) * rollouts, f"agent {provider}:{model}", stream=self.stderr._out)
        results = run_agent(
            ids,
            provider_factory=factory,
            label=f"{provider}:{model}",
            rollouts=rollouts,
            workers=workers,
            on_result=lambda _: progress.advance(),
        )
        progress.close()
        self._summary(results, types_by_id)

    def do_import(self, *, path, name, dataset, **_):
        from pathlib import Path

        from annotation.agents.outputs import agent_run_import

        if not Path(path).is_dir():
            raise CommandError(f"{path} is not a folder")
        result = agent_run_import(path=Path(path), name=name, dataset=dataset)
        for where, why in result.problems[:20]:
            self.stderr.write(f"skipped {where}: {why}")
        if result.unmatched:
            self.stderr.write(f"{len(result.unmatched)} ids match no stored puzzle, e.g. {result.unmatched[:5]}")
        self.stdout.write(f"import: {result.matched} puzzles matched into run {name!r}")

    def _summary(self, results, types_by_id):
        attempts, correct, submitted = Counter(), Counter(), Counter()
        for result in results:
            name = types_by_id[result.puzzle_id]
            attempts[name] += 1
            correct[name] += result.correct
            submitted[name] += result.submitted
        self.stdout.write(f"{'type':<20} {'attempts':>8} {'submitted':>9} {'correct':>7} {'Pass@1':>7}")
        for name in sorted(attempts):
            self.stdout.write(
                f"{name:<20} {attempts[name]:>8} {submitted[name]:>9} {correct[name]:>7} "
                f"{correct[name] / attempts[name]:>7.1%}"
            )
        problems = [r for r in results if r.problem]
        for result in problems[:5]:
            self.stdout.write(f"problem on attempt {result.attempt_uid}: {result.problem}")
        total = sum(attempts.values())
        self.stdout.write(f"agent: {sum(correct.values())}/{total} correct")
