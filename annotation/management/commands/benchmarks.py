"""`python manage.py benchmarks add|list|draw|check|assets|import-results`: CAPTCHA servers measured
through ours (docs/hosted.md).

add   NAME --url URL [--dialect D] [--published-set]  the server must answer; each family it lists is probed
list  [NAME]                        each benchmark and its families: served or set aside, and why
draw  NAME --per-type N [--types T ...] [--split test] [--seed S]  puzzles as dataset hosted:NAME
check NAME                          each drawn puzzle's truth played on its page in Chromium, through
                                    the proxy: verified, or set aside with the reason
assets NAME                         fetch the pinned local copies of what its page loads off-origin
import-results NAME FILE [--run RUN] [--model M]  the peer's own agent output (benchmark_results_*.json)
                                    as an agent run, paired with the drawn puzzles by family and puzzle id
"""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count

from annotation.hosted.assets import AssetProblem, fetch_copy, missing
from annotation.hosted.dialects import DIALECTS
from annotation.hosted.pagecheck import PageOutcome, benchmark_check
from annotation.hosted.registry import HostedError, benchmark_add, benchmark_draw, find_benchmark
from annotation.hosted.results import SHOWN, results_import
from annotation.models import Benchmark, BenchmarkFamily
from puzzles.hosted_names import hosted_dataset, split_hosted_type
from puzzles.models import Puzzle

# A drawn puzzle's status as `list` says it: failed puzzles are set aside (by the draw or the page check).
PUZZLE_WORDS = {"verified": "verified", "failed": "set aside", "draft": "not page-checked", "retired": "retired"}


class Command(BaseCommand):
    help = "Register CAPTCHA benchmark servers, see what they serve, draw their puzzles as a dataset."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        add = actions.add_parser("add", help="register a server and probe each family it lists")
        add.add_argument("name", help="1-24 lowercase letters, digits or hyphens; names the dataset hosted:NAME")
        add.add_argument("--url", required=True, help="the server's base URL, e.g. http://127.0.0.1:7860")
        add.add_argument("--dialect", default="nextgen", help=f"one of: {', '.join(sorted(DIALECTS))}")
        add.add_argument("--truth-public", action="store_true", help="its puzzles' answers are published")
        add.add_argument(
            "--published-set", action="store_true", help="its stored puzzles are the benchmark paper's published set"
        )
        listing = actions.add_parser("list", help="benchmarks and their families")
        listing.add_argument("name", nargs="?", help="only this benchmark")
        draw = actions.add_parser("draw", help="draw puzzles, each checked through the server's API")
        draw.add_argument("name")
        draw.add_argument("--per-type", type=int, required=True)
        draw.add_argument("--types", nargs="+", help="families to draw (default: every served family)")
        draw.add_argument("--split", default="test")
        draw.add_argument("--seed", type=int, default=0)
        check = actions.add_parser("check", help="play each drawn puzzle's truth on its page in Chromium")
        check.add_argument("name")
        assets = actions.add_parser("assets", help="fetch the pinned copies of files its page loads off-origin")
        assets.add_argument("name")
        results = actions.add_parser("import-results", help="the peer's agent output as an agent run")
        results.add_argument("name")
        results.add_argument("file", help="benchmark_results_*.json: one JSON object a line, as the peer writes it")
        results.add_argument("--run", dest="run_name", help="the run's name (default: NAME:MODEL:file stem)")
        results.add_argument("--model", help="the model whose records to import, when the file has several")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            getattr(self, f"_{action.replace('-', '_')}")(**options)
        except HostedError as error:
            raise CommandError(str(error)) from None

    def _add(self, name: str, url: str, dialect: str, truth_public: bool, published_set: bool, **_: Any) -> None:
        benchmark = benchmark_add(
            name=name, url=url, dialect=dialect, truth_public=truth_public, published_set=published_set
        )
        self._print(benchmark)

    def _list(self, name: str | None, **_: Any) -> None:
        benchmarks = [find_benchmark(name)] if name else list(Benchmark.objects.all())
        if not benchmarks:
            self.stdout.write("no benchmarks yet (benchmarks add NAME --url URL)")
        for benchmark in benchmarks:
            self._print(benchmark)

    def _draw(self, name: str, per_type: int, types: list[str] | None, split: str, seed: int, **_: Any) -> None:
        draws = benchmark_draw(name=name, per_type=per_type, types=types, split=split, seed=seed)
        for draw in draws:
            extra = [f"{draw.already} drawn before"] * bool(draw.already)
            extra += [f"{draw.repeats} repeats of a puzzle drawn (the server has fewer)"] * bool(draw.repeats)
            extra += [f"{len(draw.set_aside)} set aside"] * bool(draw.set_aside)
            found = draw.drawn + draw.already + len(draw.set_aside)
            extra += [f"{per_type} asked, the server has {found}"] * (found < per_type and not draw.repeats)
            self.stdout.write(f"{draw.family:<28} {draw.drawn:>4} drawn" + "".join(f"; {e}" for e in extra))
            for source_id, reason in draw.set_aside:
                self.stdout.write(f"    {source_id}: {reason}")
        total = sum(d.drawn for d in draws)
        self.stdout.write(f"{total} puzzles drawn into dataset {hosted_dataset(name)} ({split}, seed {seed})")

    def _check(self, name: str, **_: Any) -> None:
        benchmark = find_benchmark(name)
        for pin in missing(benchmark.assets):
            self.stderr.write(f"warning: no local copy of {pin.url} (benchmarks assets {name}): its pages will fail")
        outcomes = benchmark_check(name=name, on_result=self._progress)
        passed = sum(outcome.verified for outcome in outcomes)
        self.stdout.write(f"{passed} of {len(outcomes)} puzzles verified through their page")
        self._print(find_benchmark(name))

    def _progress(self, outcome: PageOutcome, number: int, total: int) -> None:
        said = "verified" if outcome.verified else f"failed: {outcome.reason}"
        self.stdout.write(f"[{number}/{total}] {outcome.family} {outcome.source_id}: {said}")

    def _assets(self, name: str, **_: Any) -> None:
        benchmark = find_benchmark(name)
        wanted = missing(benchmark.assets)
        for pin in wanted:
            try:
                self.stdout.write(f"{pin.url}: {pin.source} -> {fetch_copy(pin)}")
            except AssetProblem as problem:
                raise CommandError(str(problem)) from None
        kept = len(benchmark.assets) - len(wanted)
        self.stdout.write(f"{len(wanted)} fetched, {kept} already kept, each checked against its sha256")

    def _import_results(self, name: str, file: str, run_name: str | None, model: str | None, **_: Any) -> None:
        result = results_import(benchmark=name, path=Path(file), name=run_name, model=model)
        for line, why in result.problems[:SHOWN]:
            self.stderr.write(f"line {line} skipped: {why}")
        if len(result.problems) > SHOWN:
            self.stderr.write(f"... and {len(result.problems) - SHOWN} more lines skipped")
        if result.unknown:
            named = ", ".join(f"{what} (line {line})" for line, what in result.unknown[:SHOWN])
            more = f" and {len(result.unknown) - SHOWN} more" if len(result.unknown) > SHOWN else ""
            self.stderr.write(
                f"{len(result.unknown)} records name no drawn puzzle of {name}, not imported: {named}{more}"
            )
        self.stdout.write(
            f"import-results: {result.paired} of {result.records} records on {result.puzzles} drawn puzzles"
            f" into run {result.run.name!r} (k = {result.run.rollouts_per_puzzle})"
        )

    def _print(self, benchmark: Benchmark) -> None:
        rows = list(benchmark.families.all())
        served = sum(row.status == BenchmarkFamily.Status.SERVED for row in rows)
        self.stdout.write(
            f"{benchmark.name}  {benchmark.base_url}  ({DIALECTS[benchmark.dialect].title})  "
            f"{served} of {len(rows)} families served, added {benchmark.added_at:%Y-%m-%d %H:%M}"
        )
        counts = self._puzzle_counts(benchmark)
        for row in rows:
            self.stdout.write(f"  {row.family:<28} {self._status(row)}{counts.get(row.family, '')}")

    def _puzzle_counts(self, benchmark: Benchmark) -> dict[str, str]:
        """Per family: its drawn puzzles by status ("; 3 verified, 1 set aside")."""
        rows = (
            Puzzle.objects.filter(dataset=hosted_dataset(benchmark.name))
            .values_list("type", "status")
            .annotate(n=Count("pk"))
            .order_by("type", "status")
        )
        found: dict[str, list[str]] = {}
        for puzzle_type, status, n in rows:
            found.setdefault((split_hosted_type(puzzle_type) or ("", puzzle_type))[1], []).append(
                f"{n} {PUZZLE_WORDS.get(status, status)}"
            )
        return {family: "; " + ", ".join(words) for family, words in found.items()}

    def _status(self, row: BenchmarkFamily) -> str:
        if row.status == BenchmarkFamily.Status.SET_ASIDE:
            return f"set aside: {row.reason}"
        traits = [f"by {row.address}"] + ["stateful"] * row.stateful + ["multi-step"] * row.multi_step
        traits += [f"{row.size} stored"] * bool(row.size)
        page = f"page check {row.page_check}" + (f" ({row.page_note})" if row.page_note else "")
        return f"served ({', '.join(traits)}); {page}"
