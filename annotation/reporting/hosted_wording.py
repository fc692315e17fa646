"""The hosted benchmarks' section in words: its tables, lines and summary rows, read by every format
of render.py (docs/reports.md "Hosted benchmarks"). Pure: the report's data in, text out."""

from __future__ import annotations

from typing import Any

from annotation.reporting.report_types import (
    HostedBenchmark,
    HostedFamily,
    HostedParticipant,
    StudyReport,
)
from annotation.reporting.wording import DASH, fmt_ci_method, fmt_count, fmt_pass1, fmt_pct, fmt_seconds, plural

HOSTED_NOTE = (
    "Each family of a hosted benchmark is a puzzle type named benchmark:Family, counted by the same rules as"
    " ours (first attempts, intervals clustered by person, exact below 10 people). The verdict is the peer's"
    " own: its check_answer, forwarded once per attempt through our proxy; times come from our events. The"
    " mean over a benchmark's families weighs each family the same, with its interval over the people who"
    " answered them."
)
FAMILY_HEADERS = [
    "Family",
    "Pass@1 [95% CI]",
    "95% CI method",
    "Answers",
    "People",
    "Median wall s",
    "Median active s",
    "Puzzles (addresses)",
]
PARTICIPANT_HEADERS = ["Enrolment", "Families", "Answers", "Correct", "Pass@1", "Median wall s", "Median active s"]
ADDRESSES_SHOWN = 6  # in a table cell; the JSON and the per-type CSV hold every one
# How a peer addresses a puzzle, as the report's provenance says it.
MADE_BY = {
    "seed": "made by the peer's own generator from each seed",
    "index": "the peer's stored puzzles, by index",
    "id": "the peer's stored puzzles, by id",
    "none": "the peer's next puzzle (its server names no address; pinned by its puzzle id)",
}


def hosted_title(benchmark: HostedBenchmark) -> str:
    return f"Hosted benchmark: {benchmark['name']}"


def source_line(benchmark: HostedBenchmark) -> str:
    """Where the puzzles came from: the peer's server, how each family's puzzles are made or
    stored, and whether they are the benchmark paper's published set."""
    groups: dict[str, list[str]] = {}
    for family in benchmark["families"]:
        groups.setdefault(family["address"] or "none", []).append(family["family"])
    made = "; ".join(f"{', '.join(names)}: {MADE_BY.get(kind, kind)}" for kind, names in sorted(groups.items()))
    text = f"Puzzles drawn from {benchmark['name']}'s own server ({benchmark['dialect']}, {benchmark['server']})"
    text += f": {made}." if made else "."
    if not benchmark["published_set"]:
        return text + " These are not the benchmark paper's published set: the peer's server made or holds them here."
    if "seed" in groups:
        return (
            text + " Its stored puzzles are the paper's published set (as registered); those made from seeds are not."
        )
    return text + " They are the paper's published set (as registered)."


def addresses_text(family: HostedFamily) -> str:
    shown = family["addresses"][:ADDRESSES_SHOWN]
    more = len(family["addresses"]) - len(shown)
    text = ", ".join(shown) + (f", … {more} more" if more else "")
    return f"{family['puzzles']} ({text})" if shown else fmt_count(family["puzzles"])


def family_cells(family: HostedFamily) -> list[str]:
    return [
        family["family"],
        fmt_pass1(family["pass1"], family["ci_low"], family["ci_high"]),
        fmt_ci_method(family["ci_method"], family["ci_people"]),
        fmt_count(family["answers"]),
        fmt_count(family["people"]),
        fmt_seconds(family["wall_median_ms"]),
        fmt_seconds(family["active_median_ms"]),
        addresses_text(family),
    ]


def overall_cells(benchmark: HostedBenchmark) -> list[str]:
    overall = benchmark["overall"]
    families = len(benchmark["families"])
    return [
        f"Mean over {families} {'family' if families == 1 else 'families'}",
        fmt_pass1(overall["mean_pass1_over_families"], overall["mean_ci_low"], overall["mean_ci_high"]),
        fmt_ci_method(overall["mean_ci_method"], overall["ci_people"]),
        fmt_count(overall["answers"]),
        fmt_count(overall["people"]),
        DASH,
        DASH,
        fmt_count(sum(f["puzzles"] for f in benchmark["families"])),
    ]


def family_rows(benchmark: HostedBenchmark) -> list[list[str]]:
    """The family table's rows and its closing mean row (none without families)."""
    rows = [family_cells(family) for family in benchmark["families"]]
    return [*rows, overall_cells(benchmark)] if rows else []


def pooled_line(benchmark: HostedBenchmark) -> str:
    overall = benchmark["overall"]
    return (
        f"Pooled over its families: {fmt_pass1(overall['pass1_pooled'], overall['ci_low'], overall['ci_high'])}"
        f" ({fmt_ci_method(overall['ci_method'], overall['ci_people'])}), {plural(overall['answers'], 'answer')}"
        f" by {overall['people']} {'person' if overall['people'] == 1 else 'people'}."
    )


def set_aside_line(benchmark: HostedBenchmark) -> str:
    """The families never served and why, and the drawn addresses set aside per family."""
    parts = [
        f"{row['family']} ({row['by']}: {row['reason'] or 'no reason recorded'})" for row in benchmark["set_aside"]
    ]
    text = "Set aside, never served as scored work: " + ("; ".join(parts) if parts else "no family") + "."
    puzzles = [f"{f['family']} {f['set_aside_puzzles']}" for f in benchmark["families"] if f["set_aside_puzzles"]]
    return text + (f" Drawn addresses set aside (not served): {', '.join(puzzles)}." if puzzles else "")


def participant_cells(row: HostedParticipant) -> list[str]:
    return [
        fmt_count(row["enrollment"]),
        fmt_count(row["families"]),
        fmt_count(row["answers"]),
        fmt_count(row["correct"]),
        fmt_pct(row["pass1"]),
        fmt_seconds(row["wall_median_ms"]),
        fmt_seconds(row["active_median_ms"]),
    ]


def participant_rows(benchmark: HostedBenchmark) -> list[list[str]]:
    return [participant_cells(row) for row in benchmark["participants"]]


def set_aside_reasons(report: StudyReport) -> dict[str, str]:
    """Per hosted type never served, why (the per-type CSV's no_pass1_reason)."""
    return {
        f"{benchmark['name']}:{row['family']}": f"set aside by the {row['by']}: {row['reason']}"
        for benchmark in report["hosted"]
        for row in benchmark["set_aside"]
    }


def hosted_addresses(report: StudyReport) -> dict[str, str]:
    """Per hosted type in the report, the peer's addresses of its puzzles (the per-type CSV's column)."""
    return {
        family["type"]: " ".join(family["addresses"])
        for benchmark in report["hosted"]
        for family in benchmark["families"]
    }


def summary_rows(report: StudyReport) -> list[list[Any]]:
    """The summary CSV's rows per hosted benchmark (section hosted:<name>)."""
    rows: list[list[Any]] = []
    for benchmark in report["hosted"]:
        rows += _benchmark_rows(benchmark)
    return rows


def _benchmark_rows(benchmark: HostedBenchmark) -> list[list[Any]]:
    section, overall = f"hosted:{benchmark['name']}", benchmark["overall"]
    rows: list[list[Any]] = [
        [section, "source", int(benchmark["published_set"]), None, None, None, source_line(benchmark)],
        [
            section,
            "mean_pass1_over_families",
            overall["mean_pass1_over_families"],
            overall["mean_ci_low"],
            overall["mean_ci_high"],
            len(benchmark["families"]),
            f"unweighted mean of the families' Pass@1; n: families{_how(overall['mean_ci_method'])}",
        ],
        [
            section,
            "pass1_pooled",
            overall["pass1_pooled"],
            overall["ci_low"],
            overall["ci_high"],
            overall["answers"],
            f"correct / answers; n: answers{_how(overall['ci_method'])}",
        ],
        [section, "people", overall["people"], None, None, None, "people with answers on its families"],
    ]
    rows += [
        [section, f"set_aside:{row['family']}", 0, None, None, None, f"{row['by']}: {row['reason']}"]
        for row in benchmark["set_aside"]
    ]
    return rows


def _how(method: str) -> str:
    return f"; 95% interval clustered by person: {method}" if method else ""
