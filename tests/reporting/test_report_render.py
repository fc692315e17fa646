"""The study report rendered as CSV (per type, and the summary apart), Markdown, JSON and one
self-contained HTML page. No database."""

import copy
import csv
import io
import json
import random
import re
from html.parser import HTMLParser

import pytest

from annotation.reporting.render import (
    CSV_TYPE_COLUMNS,
    DROPPED_CSV_COLUMN,
    FORMATS,
    POSITION_CSV_COLUMNS,
    SUMMARY_COLUMNS,
    render,
    to_csv,
    to_html,
    to_markdown,
    to_summary_csv,
)
from tests.reporting.report_factory import complete

TYPE_NAMES = [
    "Bingo",
    "Click_Order",
    "Coordinates",
    "Connect_icon",
    "Dart_Count",
    "Dice_Count",
    "Geometry_Click",
    "Hold_Button",
    "Image_Matching",
    "Image_Recognition",
    "Misleading_Click",
    "Object_Match",
    "Patch_Select",
    "Path_Finder",
    "Pick_Area",
    "Place_Dot",
    "Rotation_Match",
    "Select_Animal",
    "Slide_Puzzle",
    "Unusual_Detection",
]


def sample_report() -> dict:
    """The report from the brief: one type, one agent."""
    return complete(
        {
            "study": {
                "id": 3,
                "name": "Pilot",
                "split": "test",
                "overlap": 2,
                "attempts_per_puzzle": 1,
                "time_limit_s": 60,
            },
            "generated_at": "2026-11-30T04:00:00+00:00",
            "annotators": 12,
            "excluded_annotators": 1,
            "intervals": {
                "method": "cluster bootstrap over annotators",
                "level": 0.95,
                "interval": "percentile",
                "annotators": 12,
                "exact": False,
                "resamples": 2000,
                "seed": 14,
                "min_people_for_bootstrap": 10,
                "few_people_method": "Clopper-Pearson over people (few participants)",
            },
            "types": [
                {
                    "type": "Bingo",
                    "attempts": 40,
                    "puzzles": 20,
                    "annotators": 12,
                    "correct": 35,
                    "wrong": 3,
                    "timed_out": 2,
                    "not_submitted": 1,
                    "pass1": 0.875,
                    "ci_low": 0.739,
                    "ci_high": 0.946,
                    "ci_method": "cluster bootstrap",
                    "ci_people": 11.6,
                    "wilson_low": 0.7394,
                    "wilson_high": 0.9455,
                    "k": 1,
                    "correct_within_k": None,
                    "pass_k_ci_low": None,
                    "pass_k_ci_high": None,
                    "no_input": 0,
                    "submitted": 40,
                    "started": 41,
                    "submission_rate": 0.9756,
                    "wall_median_ms": 5200.0,
                    "wall_q1_ms": 3900.0,
                    "wall_q3_ms": 7100.0,
                    "active_median_ms": 5000.0,
                    "active_q1_ms": 3800.0,
                    "active_q3_ms": 6900.0,
                    "mean_actions": 3.2,
                    "pass_k": None,
                },
            ],
            "overall": {
                "mean_pass1_over_types": 0.875,
                "mean_ci_low": 0.739,
                "mean_ci_high": 0.946,
                "mean_ci_method": "cluster bootstrap",
                "attempts": 40,
                "puzzles": 20,
                "correct": 35,
                "wrong": 3,
                "timed_out": 2,
                "not_submitted": 1,
                "started": 41,
                "pass1_pooled": 0.875,
                "ci_low": 0.739,
                "ci_high": 0.946,
                "ci_method": "cluster bootstrap",
                "ci_people": 11.6,
                "wilson_low": 0.7394,
                "wilson_high": 0.9455,
                "k": 1,
                "no_input": 0,
            },
            "agreement": {
                "percent_agreement": 0.9,
                "gwet_ac1": 0.85,
                "agreement_n": 20,
                "fleiss_kappa": 0.41,
                "fleiss_n": 20,
                "krippendorff_alpha": 0.42,
                "alpha_n": 20,
            },
            "agents": [
                {
                    "name": "openai:gpt-x",
                    "source": "harness",
                    "model": "gpt-x",
                    "rollouts_per_puzzle": 5,
                    "types": [{"type": "Bingo", "puzzles": 20, "pass1": 0.35, "pass_k": {"5": 0.6}}],
                    "mean_pass1_over_types": 0.35,
                    "shared_types": ["Bingo"],
                    "mean_pass1_shared": 0.35,
                    "people_mean_pass1_shared": 0.875,
                    "pass_at": {"1": 0.35, "5": 0.6},
                },
            ],
            "times": {"Bingo": {"wall_ms": [5200.0, 3900.0], "active_ms": [5000.0, 3800.0]}},
        }
    )


def realistic_report(seed: int = 4) -> dict:
    """Twenty types, two agents, skewed times with slow outliers: what a real study looks like."""
    rng = random.Random(seed)
    types, times = [], {}
    for name in TYPE_NAMES:
        attempts = rng.randint(30, 60)
        correct = rng.randint(attempts // 2, attempts)
        p = correct / attempts
        half = 1.96 * (p * (1 - p) / attempts) ** 0.5 + 0.02
        wall = sorted(rng.lognormvariate(rng.uniform(1.2, 2.8), 0.5) * 1000 for _ in range(attempts))
        wall[-1] *= 6  # someone walked away
        active = [w * rng.uniform(0.8, 1.0) for w in wall]
        times[name] = {"wall_ms": wall, "active_ms": active}
        types.append(
            {
                "type": name,
                "attempts": attempts,
                "puzzles": attempts // 2,
                "correct": correct,
                "pass1": p,
                "ci_low": max(0.0, p - half),
                "ci_high": min(1.0, p + half),
                "submitted": attempts,
                "started": attempts + rng.randint(0, 3),
                "submission_rate": attempts / (attempts + 1),
                "wall_median_ms": _quantile(wall, 0.5),
                "wall_q1_ms": _quantile(wall, 0.25),
                "wall_q3_ms": _quantile(wall, 0.75),
                "active_median_ms": _quantile(active, 0.5),
                "active_q1_ms": _quantile(active, 0.25),
                "active_q3_ms": _quantile(active, 0.75),
                "mean_actions": rng.uniform(1, 12),
                "pass_k": None,
            }
        )
    agents = []
    for name, skill in (("openai:gpt-x", 0.45), ("anthropic:claude-y <b>beta</b>", 0.65)):
        rows = [
            {
                "type": t,
                "puzzles": 20,
                "pass1": min(1.0, max(0.0, rng.gauss(skill, 0.2))),
                "pass_k": {"5": min(1.0, skill + 0.2)},
            }
            for t in TYPE_NAMES
        ]
        rows[3]["pass1"] = None  # the agent skipped a type
        known = [r["pass1"] for r in rows if r["pass1"] is not None]
        people = {t["type"]: t["pass1"] for t in types}
        shared = [r["type"] for r in rows if r["pass1"] is not None]
        agents.append(
            {
                "name": name,
                "source": "harness",
                "model": name.split(":")[1],
                "rollouts_per_puzzle": 5,
                "types": rows,
                "mean_pass1_over_types": sum(known) / len(known),
                "shared_types": shared,
                "mean_pass1_shared": sum(known) / len(known),
                "people_mean_pass1_shared": sum(people[t] for t in shared) / len(shared),
                "pass_at": {"1": sum(known) / len(known), "5": min(1.0, skill + 0.2)},
            }
        )
    mean = sum(t["pass1"] for t in types) / len(types)
    attempts = sum(t["attempts"] for t in types)
    correct = sum(t["correct"] for t in types)
    return complete(
        {
            "study": {
                "id": 7,
                "name": "Main study — winter 2026",
                "split": "test",
                "overlap": 3,
                "attempts_per_puzzle": 1,
            },
            "generated_at": "2026-11-30T04:00:00+00:00",
            "annotators": 64,
            "excluded_annotators": 3,
            "types": types,
            "overall": {
                "mean_pass1_over_types": mean,
                "attempts": attempts,
                "puzzles": sum(t["puzzles"] for t in types),
                "correct": correct,
                "pass1_pooled": correct / attempts,
                "ci_low": correct / attempts - 0.015,
                "ci_high": correct / attempts + 0.015,
            },
            "agreement": {"fleiss_kappa": 0.38, "fleiss_n": 310, "krippendorff_alpha": 0.39, "alpha_n": 400},
            "agents": agents,
            "times": times,
        }
    )


def _quantile(values, q):
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def sparse_report() -> dict:
    """Agreement None, no agents, no times, and Nones in the numbers."""
    report = sample_report()
    report["study"]["overlap"] = 1
    report["agreement"] = None
    report["agents"] = []
    report["times"] = {}
    row = report["types"][0]
    for key in (
        "ci_low",
        "ci_high",
        "submission_rate",
        "wall_median_ms",
        "wall_q1_ms",
        "wall_q3_ms",
        "active_median_ms",
        "active_q1_ms",
        "active_q3_ms",
        "mean_actions",
    ):
        row[key] = None
    return report


def class_count(html: str, cls: str) -> int:
    return len(re.findall(rf'class="{re.escape(cls)}"', html))


class Tags(HTMLParser):
    """Collects start tags and checks that every opened element is closed in order."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "line", "rect", "circle", "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.errors = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def parse(html: str) -> Tags:
    parser = Tags()
    parser.feed(html)
    parser.close()
    return parser


# --- CSV ----------------------------------------------------------------------------------------


def k3_report() -> dict:
    """The sample with three attempts allowed per puzzle: people's Pass@3 beside Pass@1."""
    report = sample_report()
    report["study"]["attempts_per_puzzle"] = 3
    row = report["types"][0]
    row.update({"k": 3, "correct_within_k": 38, "pass_k": 0.95, "pass_k_ci_low": 0.8721, "pass_k_ci_high": 0.99})
    report["overall"].update(
        {
            "k": 3,
            "mean_pass_k_over_types": 0.95,
            "mean_pass_k_ci_low": 0.8721,
            "mean_pass_k_ci_high": 0.99,
            "pass_k_pooled": 0.95,
            "pass_k_ci_low": 0.8721,
            "pass_k_ci_high": 0.99,
        }
    )
    return report


def test_csv_parses_back_with_the_header_values_and_agent_columns_and_no_mean_row():
    reader = csv.DictReader(io.StringIO(to_csv(sample_report())))
    rows = list(reader)
    agents = ["agent:openai:gpt-x:pass1", "agent:openai:gpt-x:pass5"]
    assert reader.fieldnames == [*CSV_TYPE_COLUMNS, DROPPED_CSV_COLUMN, *POSITION_CSV_COLUMNS, *agents]
    assert reader.fieldnames[:5] == ["type", "attempts", "puzzles", "annotators", "correct"]
    (bingo,) = rows  # data rows only: the means are the summary's
    assert bingo["type"] == "Bingo"
    assert bingo["attempts"] == "40" and bingo["puzzles"] == "20" and bingo["correct"] == "35"
    assert (bingo["wrong"], bingo["timed_out"], bingo["not_submitted"]) == ("3", "2", "1")
    assert bingo["pass1"] == "0.875" and bingo["ci_low"] == "0.739" and bingo["ci_high"] == "0.946"
    assert bingo["wilson_low"] == "0.7394" and bingo["k"] == "1" and bingo["pass_k"] == ""
    assert bingo["submission_rate"] == "0.9756"
    assert bingo["wall_q3_ms"] == "7100" and bingo["active_median_ms"] == "5000"  # whole milliseconds
    assert bingo["mean_actions"] == "3.2"
    assert bingo["agent:openai:gpt-x:pass1"] == "0.35" and bingo["agent:openai:gpt-x:pass5"] == "0.6"
    assert "MEAN OVER TYPES" not in to_csv(sample_report()).upper()


def test_csv_rounds_every_number_and_writes_none_as_empty():
    report = sparse_report()
    row = report["types"][0]
    row.update({"pass1": 2 / 3, "ci_high": 0.1 + 0.2, "wall_median_ms": 5234.56789, "mean_actions": 10 / 3})
    (bingo,) = csv.DictReader(io.StringIO(to_csv(report)))
    assert bingo["pass1"] == "0.6667"  # not 0.6666666666666666
    assert bingo["ci_high"] == "0.3"  # not 0.30000000000000004
    assert bingo["wall_median_ms"] == "5235" and bingo["mean_actions"] == "3.33"
    assert bingo["ci_low"] == "" and bingo["wall_q1_ms"] == "" and bingo["active_median_ms"] == ""
    realistic = to_csv(realistic_report()) + to_summary_csv(realistic_report())
    longest = max(len(cell.split(".")[1]) for cell in re.findall(r"(?<![\w:])\d+\.\d+(?![\w.])", realistic))
    assert longest <= 4


def test_csv_puts_an_agent_that_misses_a_type_as_an_empty_cell_and_quotes_awkward_names():
    report = realistic_report()
    report["agents"][0]["name"] = 'odd, "quoted" name'
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    assert [r["type"] for r in rows] == TYPE_NAMES  # one row per type, nothing after
    column = 'agent:odd, "quoted" name:pass1'
    assert rows[3][column] == ""  # skipped type
    assert rows[0][column] == f"{report['agents'][0]['types'][0]['pass1']:.4f}".rstrip("0").rstrip(".")


def test_csv_of_an_empty_report_is_its_header():
    rows = list(csv.reader(io.StringIO(to_csv(complete({"types": [], "agents": []})))))
    assert rows == [[*CSV_TYPE_COLUMNS, DROPPED_CSV_COLUMN, *POSITION_CSV_COLUMNS]]


def summary_of(report: dict) -> dict[tuple[str, str], dict]:
    rows = list(csv.DictReader(io.StringIO(to_summary_csv(report))))
    return {(r["section"], r["measure"]): r for r in rows}


def test_the_summary_csv_holds_the_means_with_intervals_outcomes_agreement_and_agents():
    header = next(csv.reader(io.StringIO(to_summary_csv(sample_report()))))
    assert header == list(SUMMARY_COLUMNS)
    summary = summary_of(sample_report())
    mean = summary[("people", "mean_pass1_over_types")]
    assert (mean["value"], mean["ci_low"], mean["ci_high"], mean["n"]) == ("0.875", "0.739", "0.946", "1")
    assert "clustered by annotator: cluster bootstrap, n = 11.6 effective people" in mean["method"]
    assert summary[("people", "pass1_pooled_wilson")]["ci_low"] == "0.7394"
    outcomes = {m: summary[("outcomes", m)]["value"] for m in ("correct", "wrong", "timed_out", "not_submitted")}
    assert outcomes == {"correct": "35", "wrong": "3", "timed_out": "2", "not_submitted": "1"}
    assert summary[("agreement", "percent_agreement")]["value"] == "0.9"
    assert summary[("agreement", "gwet_ac1")]["value"] == "0.85"
    assert summary[("agreement", "fleiss_kappa")]["value"] == "0.41"
    assert summary[("agent:openai:gpt-x", "pass5")]["value"] == "0.6"
    assert ("people", "mean_pass3_over_types") not in summary  # k = 1: no Pass@k rows


def test_the_summary_is_a_format_of_its_own():
    assert FORMATS["summary.csv"] == "text/csv" and FORMATS["csv"] == "text/csv"
    assert render(sample_report(), "summary.csv") == to_summary_csv(sample_report())


# --- Pass@k (k > 1) in every format --------------------------------------------------------------


def test_people_pass_k_is_in_every_format():
    report = k3_report()
    assert set(FORMATS) == {"html", "csv", "summary.csv", "json", "md"}  # a new format needs its line here
    (bingo,) = csv.DictReader(io.StringIO(render(report, "csv")))
    assert (bingo["k"], bingo["correct_within_k"], bingo["pass_k"]) == ("3", "38", "0.95")
    assert (bingo["pass_k_ci_low"], bingo["pass_k_ci_high"]) == ("0.8721", "0.99")
    summary = summary_of(report)
    assert summary[("people", "mean_pass3_over_types")]["value"] == "0.95"
    assert summary[("people", "mean_pass3_over_types")]["ci_low"] == "0.8721"
    assert summary[("people", "pass3_pooled")]["ci_high"] == "0.99"
    data = json.loads(render(report, "json"))
    assert data["types"][0]["pass_k"] == 0.95 and data["overall"]["mean_pass_k_over_types"] == 0.95
    md = render(report, "md")
    header = next(line for line in md.splitlines() if line.startswith("| Type | Pass@1"))
    assert "| Pass@3 [95% CI] |" in header
    assert "| Bingo | 87.5% [73.9, 94.6] | 95.0% [87.2, 99.0] |" in md
    assert "Mean Pass@3 over types: 95.0% [87.2, 99.0]" in md
    assert "| Bingo | 87.5% · pass@3 95.0% | 35.0% · pass@5 60.0% |" in md  # people beside the agents
    html = render(report, "html")
    assert "Pass@3 [95% CI]" in html and "95.0% [87.2, 99.0]" in html
    assert "mean Pass@3 over types" in html and "87.5% · pass@3 95.0%" in html


def test_with_one_attempt_allowed_there_is_no_pass_k_column():
    md = to_markdown(sample_report())
    header = next(line for line in md.splitlines() if line.startswith("| Type | Pass@1"))
    assert header.count("[95% CI]") == 1 and "Pass@3" not in md
    assert "Pass@1 [95% CI]</th><th>95% CI method</th><th>Correct" in to_html(sample_report())


# --- time-outs apart from wrong answers -----------------------------------------------------------


def test_time_outs_are_told_apart_from_wrong_answers_in_every_format():
    report = sample_report()
    md = to_markdown(report)
    assert "| Wrong | Timed out |" in md
    assert "| Bingo | 87.5% [73.9, 94.6] | bootstrap, 11.6 people | 35 | 3 | 2 | 40 / 20 / 12 |" in md
    assert "Outcomes of 41 answers started: 35 correct, 3 wrong, 2 timed out, 1 not submitted." in md
    assert "time limit 60 s per puzzle" in md
    html = to_html(report)
    assert "<th>Timed out</th>" in html and "2 timed out" in html
    assert "timed out (3 wrong), limit 60 s" in html  # the fact card
    (bingo,) = csv.DictReader(io.StringIO(to_csv(report)))
    assert (bingo["wrong"], bingo["timed_out"]) == ("3", "2")
    assert summary_of(report)[("outcomes", "timed_out")]["value"] == "2"


# --- agreement ---------------------------------------------------------------------------------


def test_agreement_shows_percent_agreement_and_ac1_beside_kappa_and_alpha():
    report = sample_report()
    report["agreement"] = {  # the case: 13 of 14 puzzles agreed
        "percent_agreement": 13 / 14,
        "gwet_ac1": 337 / 365,
        "agreement_n": 14,
        "fleiss_kappa": -1 / 27,
        "fleiss_n": 14,
        "krippendorff_alpha": 0.0,
        "alpha_n": 14,
    }
    for text in (to_markdown(report), to_html(report).replace("&#x27;", "'")):
        assert "Percent agreement = 92.9% (n = 14 puzzles)" in text
        assert "Gwet's AC1 = 0.92 (n = 14 puzzles)" in text
        assert "Fleiss' κ = −0.04 (n = 14 puzzles)" in text
        assert "Krippendorff's α = 0.00 (n = 14 puzzles)" in text
        assert "kappa paradox" in text


def test_the_interval_method_is_said_in_the_notes():
    md = to_markdown(sample_report())
    assert "clustered by annotator" in md and "cluster bootstrap over annotators" in md
    assert "2000 resamples of 12 annotators, seed 14" in md
    report = sample_report()
    report["intervals"].update({"exact": True, "resamples": 10, "annotators": 3, "seed": None})
    html = to_html(report).replace("&#x27;", "'")
    assert "With 3 annotators, fewer than the 10 a cluster bootstrap needs" in html and "resamples" not in html
    report["intervals"].update({"annotators": 10, "resamples": 2000, "exact": False, "seed": 14})
    assert "2000 resamples of 10 annotators, seed 14" in to_markdown(report)


# --- Markdown -----------------------------------------------------------------------------------


def test_markdown_has_the_title_annotators_interval_times_and_agreement():
    md = to_markdown(sample_report())
    assert md.startswith("# Human baseline: Pilot\n")
    assert "12 annotators (1 excluded)" in md
    assert "87.5% [73.9, 94.6]" in md
    assert "40 / 20" in md  # attempts / puzzles
    assert "97.6% (40/41)" in md  # submission rate
    assert "5.2 (3.9–7.1)" in md and "5.0 (3.8–6.9)" in md  # seconds, median (IQR)
    assert "| 3.2 |" in md
    assert "Mean Pass@1 over types: 87.5%" in md
    assert "Fleiss' κ = 0.41 (n = 20 puzzles)" in md
    assert "Krippendorff's α = 0.42 (n = 20 puzzles)" in md


def test_markdown_agents_table_sets_people_against_each_agent_with_pass_k_lines():
    md = to_markdown(sample_report())
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| Type | People |"))
    assert "openai:gpt-x" in header
    assert "| Bingo | 87.5% | 35.0% · pass@5 60.0% |" in lines
    assert "| Mean over types | 87.5% | 35.0% |" in lines
    assert any(line.startswith("- **openai:gpt-x**") and "Pass@1 35.0% · Pass@5 60.0%" in line for line in lines)
    assert "5 rollouts per puzzle" in md


def test_markdown_tables_have_one_row_per_type_and_consistent_columns():
    md = to_markdown(realistic_report())
    tables, current = [], []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    assert len(tables) == 2  # per type, agents
    for table in tables:
        assert len(table) == 2 + 20 + 1  # header, rule, types, mean over types
        assert len({len(re.split(r"(?<!\\)\|", line)) for line in table}) == 1
    assert all(re.search(rf"^\| {name} \| \d+\.\d% \[", md, re.M) for name in TYPE_NAMES)
    assert "&lt;b&gt;beta&lt;/b&gt;" in md and "<b>" not in md  # agent name escaped


def test_markdown_without_agreement_agents_or_numbers_shows_dashes():
    md = to_markdown(sparse_report())
    assert "n/a (overlap 1)" in md
    assert "No agents" in md
    bingo = next(line for line in md.splitlines() if line.startswith("| Bingo |"))
    assert "| 87.5% |" in bingo  # no interval when the CI is missing
    assert bingo.count("–") >= 4


def test_markdown_escapes_markup_and_table_pipes():
    report = sample_report()
    report["study"]["name"] = "<script>alert(1)</script>"
    report["agents"][0]["name"] = "a|b"
    md = to_markdown(report)
    assert "<script" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "a\\|b" in md


# --- HTML ---------------------------------------------------------------------------------------


def test_html_is_one_self_contained_page_with_charts_and_the_numbers():
    html = to_html(sample_report())
    assert html.startswith("<!DOCTYPE html>")
    assert html.count("<svg") == 2 and "<style>" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html.lower()
    assert "<link" not in html and "src=" not in html and "url(" not in html
    assert "87.5% [73.9, 94.6]" in html
    assert "Fleiss&#x27; κ = 0.41 (n = 20 puzzles)" in html
    assert "openai:gpt-x" in html and "Pass@5 60.0%" in html
    assert class_count(html, "bar-people") == 1
    assert class_count(html, "bar-agent") == 2  # the type and the mean over types
    assert class_count(html, "box-wall") == 1 and class_count(html, "box-active") == 1
    tags = parse(html)
    assert tags.errors == [] and tags.stack == []


def test_html_escapes_a_hostile_study_name_and_agent_name():
    report = sample_report()
    report["study"]["name"] = "<script>alert(1)</script>"
    report["agents"][0]["name"] = '"><script>alert(2)</script>'
    html = to_html(report)
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert parse(html).errors == []


def test_html_draws_one_people_bar_and_two_boxes_per_type_for_twenty_types():
    report = realistic_report()
    html = to_html(report)
    assert class_count(html, "bar-people") == 20
    assert class_count(html, "bar-mean") == 1
    assert class_count(html, "bar-agent") == 2 * 20 - 2 + 2  # one skipped type each, plus the means
    assert class_count(html, "box-wall") == 20 and class_count(html, "box-active") == 20
    assert html.count('class="ci"') == 20
    assert "0%" in html and "100%" in html and "log scale" in html
    for name in TYPE_NAMES:
        assert f">{name}<" in html
    assert "&lt;b&gt;beta&lt;/b&gt;" in html and "<b>beta" not in html
    tags = parse(html)
    assert tags.errors == [] and tags.stack == []


def test_html_bars_scale_with_pass1():
    report = sample_report()
    wide = re.search(r'class="bar-people"[^>]*width="([\d.]+)"', to_html(report))
    report["types"][0]["pass1"] = 0.4375
    narrow = re.search(r'class="bar-people"[^>]*width="([\d.]+)"', to_html(report))
    assert float(narrow.group(1)) == pytest.approx(float(wide.group(1)) / 2, abs=0.2)


def test_html_renders_without_agreement_agents_or_times():
    html = to_html(sparse_report())
    assert "<svg" in html
    assert "n/a (overlap 1)" in html
    assert "No agents" in html
    assert "No times recorded" in html
    assert class_count(html, "bar-people") == 1 and class_count(html, "bar-agent") == 0
    assert "–" in html
    assert parse(html).errors == []


def test_html_box_plot_falls_back_to_the_recorded_times_and_to_the_report_quartiles():
    report = sample_report()
    row = report["types"][0]
    row["wall_median_ms"] = row["wall_q1_ms"] = row["wall_q3_ms"] = None  # computed from times
    report["times"]["Bingo"]["active_ms"] = []  # box from the report, no whiskers
    html = to_html(report)
    assert class_count(html, "box-wall") == 1 and class_count(html, "box-active") == 1


@pytest.mark.parametrize(
    "report",
    [
        complete({}),
        complete({"study": {"overlap": 2}, "agreement": None, "motion": {"rule": "a rule"}}),
        complete({"types": [{"type": "Bingo"}], "agents": [{"types": []}], "times": {"Bingo": {}}}),
    ],
)
def test_every_format_survives_a_nearly_empty_report(report):
    """Blank figures everywhere: no answer, no agent's puzzle, no time, no name."""
    for fmt in FORMATS:
        assert render(copy.deepcopy(report), fmt)
    html = to_html(copy.deepcopy(report))
    assert "<svg" in html or "nothing to chart" in html
    assert parse(html).errors == []
