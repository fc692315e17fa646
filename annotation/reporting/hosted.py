"""Hosted benchmarks in a study report: people on another project's CAPTCHA families, served by its
own server through ours (docs/hosted.md), one entry per benchmark whose puzzles are in the report.

A hosted family is a puzzle type named `<benchmark>:<Family>`, so people's per-type rows already
carry it with the same rules as our types (Pass@1 over first attempts, intervals clustered by
person, exact below 10 people; times). This section gathers a benchmark's rows, its mean over its
own families with an interval from its own people, each person's answers on it, the families
never served and why (`BenchmarkFamily`: the probe through the peer's API, the page check), and
where the puzzles came from: the peer's addresses (a seed its generator makes a puzzle from, an
index or an id of its stored puzzles) and whether those are the paper's published set.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable

import numpy as np

from annotation.models import Benchmark, BenchmarkFamily, Enrollment, Study
from annotation.reporting.people import Answer, PeopleCounts, Pool
from annotation.reporting.report_types import (
    HostedBenchmark,
    HostedFamily,
    HostedOverall,
    HostedParticipant,
    SetAsideFamily,
    TypeRow,
)
from annotation.reporting.stats import ClusterBootstrap, effective_people, mean_of_present, people_interval
from puzzles.hosted_names import hosted_dataset, split_hosted_type
from puzzles.models import Puzzle

DATASET_PREFIX = hosted_dataset("")  # "hosted:"
PROBE, PAGE_CHECK = "probe", "page check"


def hosted_section(
    *, study: Study, counts: PeopleCounts, pool: Pool, datasets: Collection[str]
) -> list[HostedBenchmark]:
    """One entry per hosted benchmark with puzzles in the pool or a dataset of the report."""
    addresses = _pool_addresses(pool)
    names = {name for name, _ in addresses} | {
        d.removeprefix(DATASET_PREFIX) for d in datasets if d.startswith(DATASET_PREFIX)
    }
    if not names:
        return []
    enrollments = dict(Enrollment.objects.filter(study=study).values_list("participant_id", "pk"))
    rows = {row["type"]: row for row in counts.types}
    return [
        _benchmark(benchmark, counts, rows, addresses, enrollments)
        for benchmark in Benchmark.objects.filter(name__in=names).prefetch_related("families")
    ]


def _pool_addresses(pool: Pool) -> dict[tuple[str, str], list[str]]:
    """(benchmark, family): the peer's addresses of the pool's puzzles of it, in the peer's order."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    puzzles = Puzzle.objects.filter(pk__in=pool, dataset__startswith=DATASET_PREFIX).order_by(
        "type", "index", "source_id"
    )
    for kind, source_id in puzzles.values_list("type", "source_id"):
        named = split_hosted_type(kind)
        if named:
            found[named].append(source_id)
    return found


def _benchmark(
    benchmark: Benchmark,
    counts: PeopleCounts,
    rows: dict[str, TypeRow],
    addresses: dict[tuple[str, str], list[str]],
    enrollments: dict[int, int],
) -> HostedBenchmark:
    families = {row.family: row for row in benchmark.families.all()}
    in_pool = sorted(family for name, family in addresses if name == benchmark.name)
    set_aside_puzzles = _set_aside_puzzles(benchmark)
    family_rows = [
        _family(benchmark.name, family, families.get(family), rows, addresses, set_aside_puzzles) for family in in_pool
    ]
    types = [row["type"] for row in family_rows]
    answers = [a for a in counts.counted if a["submitted"] and a["type"] in types]
    return {
        "name": benchmark.name,
        "dataset": hosted_dataset(benchmark.name),
        "dialect": benchmark.dialect,
        "server": benchmark.base_url,
        "published_set": benchmark.published_set,
        "families": family_rows,
        "overall": _over_families(counts, family_rows),
        "set_aside": _set_aside_families(families.values()),
        "participants": _participants(answers, enrollments),
    }


def _family(
    benchmark: str,
    family: str,
    probed: BenchmarkFamily | None,
    rows: dict[str, TypeRow],
    addresses: dict[tuple[str, str], list[str]],
    set_aside_puzzles: Counter[str],
) -> HostedFamily:
    """A served family's people figures, read from its type row (no answers yet: none)."""
    kind = f"{benchmark}:{family}"
    row = rows.get(kind)
    drawn = addresses[(benchmark, family)]
    return {
        "family": family,
        "type": kind,
        "address": probed.address if probed else "",
        "addresses": drawn,
        "puzzles": len(drawn),
        "set_aside_puzzles": set_aside_puzzles[kind],
        "answers": row["submitted"] if row else 0,
        "people": row["annotators"] if row else 0,
        "correct": row["correct"] if row else 0,
        "pass1": row["pass1"] if row else None,
        "ci_low": row["ci_low"] if row else None,
        "ci_high": row["ci_high"] if row else None,
        "ci_method": row["ci_method"] if row else "",
        "ci_people": row["ci_people"] if row else None,
        "wall_median_ms": row["wall_median_ms"] if row else None,
        "active_median_ms": row["active_median_ms"] if row else None,
    }


def _set_aside_puzzles(benchmark: Benchmark) -> Counter[str]:
    """Per type, the drawn addresses never served: the draw's check or the page check failed them."""
    failed = Puzzle.objects.filter(dataset=hosted_dataset(benchmark.name), status=Puzzle.Status.FAILED)
    return Counter(failed.values_list("type", flat=True))


def _set_aside_families(families: Iterable[BenchmarkFamily]) -> list[SetAsideFamily]:
    """Families never served as scored work: the peer's API did not accept its own truth (probe), or
    its page could not submit a correct answer (page check)."""
    out: list[SetAsideFamily] = []
    for row in sorted(families, key=lambda r: r.family):
        if row.status == BenchmarkFamily.Status.SET_ASIDE:
            out.append({"family": row.family, "by": PROBE, "reason": row.reason})
        elif row.page_check == BenchmarkFamily.PageCheck.FAILED:
            reason = row.reason.removeprefix("page check:").strip() or row.page_note
            out.append({"family": row.family, "by": PAGE_CHECK, "reason": reason})
    return out


def _over_families(counts: PeopleCounts, families: list[HostedFamily]) -> HostedOverall:
    """The benchmark's mean Pass@1 over its families (each the same weight) and pooled, with
    intervals by Pass@1's rule over the people who answered its families: a cluster bootstrap over
    them with 10 or more, else the exact interval over people."""
    columns = [counts.columns.types.index(f["type"]) for f in families if f["type"] in counts.columns.types]
    trials = counts.boot.trials[:, columns]
    solved = counts.columns.table(counts.columns.right)[:, columns]
    answered = trials.sum(axis=1) > 0
    trials, solved = trials[answered], solved[answered]
    sizes = trials.sum(axis=1)
    mean = mean_of_present([f["pass1"] for f in families])
    pooled = float(solved.sum() / trials.sum()) if trials.sum() else None
    boot = ClusterBootstrap(trials)
    bootstrapped = boot.intervals(solved)
    mean_low, mean_high, mean_method = people_interval(mean, sizes, bootstrapped.mean)
    low, high, method = people_interval(pooled, sizes, bootstrapped.pooled)
    return {
        "mean_pass1_over_families": mean,
        "mean_ci_low": mean_low,
        "mean_ci_high": mean_high,
        "mean_ci_method": mean_method,
        "pass1_pooled": pooled,
        "ci_low": low,
        "ci_high": high,
        "ci_method": method,
        "answers": int(trials.sum()),
        "people": len(sizes),
        "ci_people": effective_people(sizes) if len(sizes) else None,
    }


def _participants(answers: list[Answer], enrollments: dict[int, int]) -> list[HostedParticipant]:
    """Each person's submitted, counted answers on the benchmark's families, by enrolment."""
    by_person: dict[int, list[Answer]] = defaultdict(list)
    for answer in answers:
        by_person[answer["participant"]].append(answer)
    rows: list[HostedParticipant] = []
    for participant, mine in by_person.items():
        correct = sum(a["correct"] for a in mine)
        rows.append(
            {
                "enrollment": enrollments.get(participant),
                "families": len({a["type"] for a in mine}),
                "answers": len(mine),
                "correct": correct,
                "pass1": correct / len(mine),
                "wall_median_ms": _median([a["wall_ms"] for a in mine]),
                "active_median_ms": _median([a["active_ms"] for a in mine]),
            }
        )
    return sorted(rows, key=lambda r: (r["enrollment"] is None, r["enrollment"] or 0))


def _median(values: list[int | None]) -> float | None:
    measured = [v for v in values if v is not None]
    return float(np.median(measured)) if measured else None
