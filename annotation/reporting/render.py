"""Render a study report (report_types.StudyReport) as CSV, Markdown, JSON, or one self-contained HTML page.

The wording (numbers, names, shared sentences) comes from wording.py; this module owns the
formats. Study, type and agent names can hold markup: the Markdown escapes them here, and the HTML page is
drawn by Django templates (templates/reporting/) whose autoescaping covers every string taken
from the report; its charts are geometry computed in charts.py. No database, no network.

    to_csv(report) -> str          one row per puzzle type and nothing else (data rows only)
    to_summary_csv(report) -> str  the summary: one row per overall figure (means over types,
                                   pooled figures, outcomes, agreement, each agent's means)
    to_markdown(report) -> str     tables and lines for a README, an issue or a pull request
    to_html(report) -> str         a whole page: inline CSS and inline SVG charts, no scripts, no URLs
    render(report, fmt) -> str     any of FORMATS, json being the report itself

CSV numbers are rounded (csv_number): proportions and agreement to 4 decimals, milliseconds to
whole ones, counts as integers; a missing value is an empty cell. Both CSVs are written by
arena_site/csv_cells.py, which quotes text a spreadsheet would run as a formula.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from html import escape
from typing import Any

from django.template.loader import render_to_string

from annotation.reporting import charts, hosted_wording
from annotation.reporting.report_types import StudyReport
from annotation.reporting.stats import BY_BOOTSTRAP
from annotation.reporting.wording import (
    AGREEMENT_NOTE,
    CSV_DIGITS,
    CSV_TYPE_COLUMNS,
    DASH,
    DROPPED_CSV_COLUMN,
    HALVES,
    MOTION_HEADERS,
    MOTION_NOTE,
    OUTCOME_NOTE,
    PASS1_NOTE,
    PEOPLE_COLOUR,
    POSITION_CSV_COLUMNS,
    POSITION_HEADERS,
    PROPORTION_DIGITS,
    SUMMARY_COLUMNS,
    TIME_DEFINITION,
    TIME_NOTE,
    TRAINING_NOTE,
    VERSUS_CSV_FIGURES,
    VERSUS_NOTE,
    agent_colour,
    agent_details,
    agent_name,
    agent_overall_pass1,
    agent_pass_at_text,
    agent_types,
    agents_mean_note,
    agents_table,
    agreement_lines,
    annotators_line,
    contamination_lines,
    dropped_reasons,
    dropped_type_reason,
    dropped_types_line,
    fmt_count,
    fmt_interval,
    fmt_pct,
    fmt_people,
    interval_note,
    is_number,
    motion_rule_line,
    motion_table_rows,
    motion_who,
    overall_lines,
    overall_row_cells,
    pass_k_items,
    position_csv_values,
    position_note,
    position_table_rows,
    public_truth_lines,
    study_k,
    study_line,
    study_title,
    training_details,
    training_headers,
    training_scope_line,
    training_table_rows,
    type_name,
    type_row_cells,
    type_table_headers,
    unpaired_reason,
    versus_headers,
    versus_method_line,
    versus_name,
    versus_table_rows,
    versus_title,
    versus_unpaired_line,
)
from arena_site.csv_cells import csv_text

# --- CSV --------------------------------------------------------------------------------------


HOSTED_CSV_COLUMN = "hosted_addresses"  # a hosted family's puzzles as the peer addresses them, when the report has any


def csv_number(value: object, digits: int = PROPORTION_DIGITS) -> Any:
    """A value as a CSV cell: None as empty, an int (or a whole float with 0 digits) as an integer,
    a float rounded to `digits` decimals without trailing zeros (0.875, not 0.8750000000000001),
    as a Decimal: a number, which the CSV writer never escapes (-0.5 is data, not a formula)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not is_number(value):
            return ""
        text = f"{value:.{digits}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return Decimal("0" if text in ("-0", "") else text)
    return value


def csv_cell(value: object, column: str = "") -> Any:
    """A value of a column as the csv module should write it, rounded as CSV_DIGITS says."""
    return csv_number(value, CSV_DIGITS.get(column, PROPORTION_DIGITS))


def agent_csv_columns(report: StudyReport) -> list[tuple[int, int, str]]:
    """(agent index, k, header) for each agent's per-type Pass@1 and every Pass@k it has."""
    columns = []
    for index, agent in enumerate(report["agents"]):
        name = agent_name(agent, index)
        ks = sorted({k for row in agent["types"] for k, _ in pass_k_items(row["pass_k"])})
        columns += [(index, k, f"agent:{name}:pass{k}") for k in [1, *ks]]
    return columns


def versus_csv_columns(report: StudyReport) -> list[tuple[int, str, str]]:
    """(run index, figure, header) for each run's paired figures per type (VERSUS_CSV_FIGURES)."""
    return [
        (index, figure, f"vs:{versus_name(versus, index)}:{figure}")
        for index, versus in enumerate(report["versus"])
        for figure in VERSUS_CSV_FIGURES
    ]


def training_csv_columns(report: StudyReport) -> list[tuple[str, int, str]]:
    """(client, checkpoint index, header) for each checkpoint's success per type."""
    return [
        (client["client"], index, f"env:{client['client']}:{point['checkpoint']}:success")
        for client in report["training"]["clients"]
        for index, point in enumerate(client["checkpoints"])
    ]


def to_csv(report: StudyReport) -> str:
    """One header row, then one row per puzzle type: data rows only, the means over types are the
    summary CSV's (to_summary_csv).

    Columns are CSV_TYPE_COLUMNS, DROPPED_CSV_COLUMN (why a type has no Pass@1 of people: a type
    of the report's puzzles that no included person answered has a row with only this and the
    agents' columns), POSITION_CSV_COLUMNS (each half of people's runs), then
    agent:<name>:pass1 (and agent:<name>:pass<k> for each Pass@k it has) for each agent, then
    vs:<name>:<figure> (VERSUS_CSV_FIGURES: people against the run, paired by puzzle) for each run,
    then env:<client>:<checkpoint>:success for each training checkpoint (its episodes' success on
    the type); a missing value is an empty cell and numbers are rounded.
    """
    columns = agent_csv_columns(report)
    paired = versus_csv_columns(report)
    trained = training_csv_columns(report)
    headers = [*CSV_TYPE_COLUMNS, DROPPED_CSV_COLUMN, *POSITION_CSV_COLUMNS, *(h for _, _, h in columns)]
    headers += [h for _, _, h in paired] + [h for _, _, h in trained]
    addresses = hosted_wording.hosted_addresses(report)
    headers += [HOSTED_CSV_COLUMN] if report["hosted"] else []
    success = {
        (client["client"], index): {row["type"]: row["success"] for row in point["types"]}
        for client in report["training"]["clients"]
        for index, point in enumerate(client["checkpoints"])
    }
    lines: list[list[Any]] = [headers]
    versus_rows = [{row["type"]: row for row in versus["rows"]} for versus in report["versus"]]
    per_agent = [agent_types(agent) for agent in report["agents"]]
    by_position = {row["type"]: row for row in report["by_position"]["rows"]}
    people = {row["type"]: row for row in report["types"]}
    dropped = {row["type"]: dropped_type_reason(row) for row in report["dropped_types"]}
    dropped |= hosted_wording.set_aside_reasons(report)  # hosted families never served: a row each
    for kind in [*people, *(kind for kind in dropped if kind not in people)]:
        row = people.get(kind)  # a type no included person answered: only its name and why
        name = type_name(row) if row else kind
        fields: Mapping[str, object] = row or {"type": kind}  # read by the column names of CSV_TYPE_COLUMNS
        values = [csv_cell(fields.get(column), column) for column in CSV_TYPE_COLUMNS]
        values.append(dropped.get(kind, ""))
        placed = position_csv_values(by_position.get(kind))
        values += [csv_cell(placed[column], column) for column in POSITION_CSV_COLUMNS]
        for index, k, _ in columns:
            agent_row = per_agent[index].get(name)  # a type this agent has no complete puzzle of: empty
            value = None
            if agent_row:
                value = agent_row["pass1"] if k == 1 else dict(pass_k_items(agent_row["pass_k"])).get(k)
            values.append(csv_number(value))
        for index, figure, _ in paired:
            versus_row: Mapping[str, object] | None = versus_rows[index].get(kind)  # none both answered
            values.append(csv_number(versus_row[figure] if versus_row else None))
        for client, index, _ in trained:
            values.append(csv_number(success[(client, index)].get(kind)))  # a type it did not play: empty
        if report["hosted"]:
            values.append(addresses.get(kind, ""))
        lines.append(values)
    return csv_text(lines)


def summary_rows(report: StudyReport) -> list[list[Any]]:
    """The summary CSV's rows (SUMMARY_COLUMNS): people's means over types and pooled figures with
    their intervals, the outcomes, agreement, and each agent's means; numbers not yet rounded."""
    return [
        *_people_rows(report),
        *_dropped_rows(report),
        *_outcome_rows(report),
        *_agreement_rows(report),
        *_position_rows(report),
        *_motion_rows(report),
        *_agent_rows(report),
        *_versus_rows(report),
        *_training_rows(report),
        *_contamination_rows(report),
        *hosted_wording.summary_rows(report),
    ]


def _people_rows(report: StudyReport) -> list[list[Any]]:
    """Annotators, and people's means over types and pooled figures with their intervals, each
    with the method of its interval."""
    overall = report["overall"]
    k = study_k(report)

    def how(method: str) -> str:
        people = fmt_people(overall["ci_people"])
        return f"; 95% interval clustered by annotator: {method}, n = {people} effective people" if method else ""

    types = len([row for row in report["types"] if is_number(row["pass1"])])
    answers = overall["attempts"]
    rows: list[list[Any]] = [
        ["people", "annotators", report["annotators"], None, None, None, ""],
        ["people", "excluded_annotators", report["excluded_annotators"], None, None, None, ""],
        [
            "people",
            "mean_pass1_over_types",
            overall["mean_pass1_over_types"],
            overall["mean_ci_low"],
            overall["mean_ci_high"],
            types,
            f"unweighted mean of the types' Pass@1; n: types{how(overall['mean_ci_method'])}",
        ],
        [
            "people",
            "pass1_pooled",
            overall["pass1_pooled"],
            overall["ci_low"],
            overall["ci_high"],
            answers,
            f"correct / answers; n: answers{how(overall['ci_method'])}",
        ],
        [
            "people",
            "pass1_pooled_wilson",
            overall["pass1_pooled"],
            overall["wilson_low"],
            overall["wilson_high"],
            answers,
            "Wilson interval, answers taken as independent (for comparison only)",
        ],
    ]
    if k > 1:
        rows += [
            [
                "people",
                f"mean_pass{k}_over_types",
                overall["mean_pass_k_over_types"],
                overall["mean_pass_k_ci_low"],
                overall["mean_pass_k_ci_high"],
                types,
                f"solved within the first {k} attempts; unweighted mean of the types; n: types"
                f"{how(overall['mean_pass_k_ci_method'])}",
            ],
            [
                "people",
                f"pass{k}_pooled",
                overall["pass_k_pooled"],
                overall["pass_k_ci_low"],
                overall["pass_k_ci_high"],
                answers,
                f"solved within the first {k} attempts / answers; n: answers{how(overall['pass_k_ci_method'])}",
            ],
        ]
    return rows


def _dropped_rows(report: StudyReport) -> list[list[Any]]:
    """The types without people's Pass@1, each with its puzzles and why."""
    return [
        ["dropped_types", row["type"], row["puzzles"], None, None, None, f"n: puzzles; {dropped_type_reason(row)}"]
        for row in report["dropped_types"]
    ]


def _outcome_rows(report: StudyReport) -> list[list[Any]]:
    """What became of the answers, and the gold and practice attempts without input evidence."""
    overall = report["overall"]
    outcomes = {
        "started": overall["started"],
        "correct": overall["correct"],
        "wrong": overall["wrong"],
        "timed_out": overall["timed_out"],
        "not_submitted": overall["not_submitted"],
        "no_input": overall["no_input"],
    }
    rows = [["outcomes", measure, n, None, None, None, "answers (first attempts)"] for measure, n in outcomes.items()]
    for purpose, count in report["no_input_beside_pool"].items():
        rows.append(["outcomes", f"no_input_{purpose}", count, None, None, None, f"{purpose} attempts, not in Pass@1"])
    return rows


def _agreement_rows(report: StudyReport) -> list[list[Any]]:
    """The four agreement figures with their n; none with an overlap of 1."""
    agreement = report["agreement"]
    if not agreement:
        return []
    n = agreement["agreement_n"]
    return [
        ["agreement", "percent_agreement", agreement["percent_agreement"], None, None, n, "n: puzzles"],
        ["agreement", "gwet_ac1", agreement["gwet_ac1"], None, None, n, "n: puzzles"],
        ["agreement", "fleiss_kappa", agreement["fleiss_kappa"], None, None, agreement["fleiss_n"], ""],
        ["agreement", "krippendorff_alpha", agreement["krippendorff_alpha"], None, None, agreement["alpha_n"], ""],
    ]


def _position_rows(report: StudyReport) -> list[list[Any]]:
    """People's Pass@1 and median times in each half of their runs, pooled over types."""
    section = report["by_position"]
    overall = section["overall"]
    how = f"half of each person's run of {section['run_length']} places; pooled over types"
    rows: list[list[Any]] = []
    for half in HALVES:
        figures = overall["first"] if half == "first" else overall["second"]
        n = figures["answers"]
        rows += [
            ["position", f"pass1_{half}_half", figures["pass1"], None, None, n, f"correct / answers; {half} {how}"],
            ["position", f"wall_median_ms_{half}_half", figures["wall_median_ms"], None, None, n, f"{half} {how}"],
            ["position", f"active_median_ms_{half}_half", figures["active_median_ms"], None, None, n, f"{half} {how}"],
        ]
    rows.append(["position", "pass1_change", overall["change"], None, None, None, "second half minus first"])
    rows.append(["position", "unplaced", section["unplaced"], None, None, None, "answers without a place"])
    return rows


def _motion_rows(report: StudyReport) -> list[list[Any]]:
    """Each group's human-likeness over all types."""
    rows: list[list[Any]] = []
    for row in report["motion"]["overall"]:
        section = f"motion:{motion_who(row['group'])}"
        n = row["with_path"]
        rows += [
            [section, "human_likeness", row["human_likeness"], None, None, n, "mean per-attempt score; n: attempts"],
            [section, "humanlike_share", row["humanlike_share"], None, None, n, "share scoring 0.75 or more"],
        ]
    return rows


def _agent_rows(report: StudyReport) -> list[list[Any]]:
    """Each agent's mean Pass@1 over types and its Pass@k over puzzles."""
    rows: list[list[Any]] = []
    for index, agent in enumerate(report["agents"]):
        section = f"agent:{agent_name(agent, index)}"
        puzzles = sum(row["puzzles"] for row in agent["types"])
        shared = len(agent["shared_types"])
        rows += [
            [section, "mean_pass1_over_types", agent_overall_pass1(agent), None, None, None, "over its own types"],
            [section, "mean_pass1_shared_types", agent["mean_pass1_shared"], None, None, shared, "n: types both have"],
            [
                section,
                "people_mean_pass1_shared_types",
                agent["people_mean_pass1_shared"],
                None,
                None,
                shared,
                "people's mean over the same types; n: types both have",
            ],
        ]
        for key, value in sorted(agent["pass_at"].items()):
            rows.append([section, f"pass{key}", value, None, None, puzzles, "mean over puzzles; n: puzzles"])
    return rows


def _versus_rows(report: StudyReport) -> list[list[Any]]:
    """People against each run over types, paired by puzzle: the Pass@1 means, the difference with
    its interval, and the shares one solves and the other does not."""
    rows: list[list[Any]] = []
    for index, versus in enumerate(report["versus"]):
        section = f"vs:{versus_name(versus, index)}"
        o = versus["overall"]
        n = o["puzzles"]
        how = f"{o['ci_method']}, {fmt_people(o['ci_people'])} effective of {o['people']} people"
        if o["ci_method"] == BY_BOOTSTRAP:
            how += f"; {versus['resamples']} resamples, seed {versus['seed']}"
        types = f"over the {len(versus['rows'])} types both answered"
        rows += [
            [section, "people_pass1", o["people_pass1"], None, None, n, f"mean {types}; n: puzzles both answered"],
            [section, "agent_pass1", o["agent_pass1"], None, None, n, f"mean {types}; n: puzzles both answered"],
            [section, "difference", o["difference"], o["ci_low"], o["ci_high"], n, f"people minus agent; {how}"],
            [section, "people_only_share", o["people_only_share"], None, None, n, "people solve, agent not"],
            [section, "agent_only_share", o["agent_only_share"], None, None, n, "agent solves, people not"],
        ]
        dropped = dropped_reasons(report)
        rows += [
            [section, f"not_compared:{row['type']}", None, None, None, None, unpaired_reason(row, dropped)]
            for row in versus["unpaired"]
        ]
    return rows


def _training_rows(report: StudyReport) -> list[list[Any]]:
    """Each training checkpoint's success over types and pooled, and people's mean on its types."""
    rows: list[list[Any]] = []
    for client in report["training"]["clients"]:
        for point in client["checkpoints"]:
            section, n = f"env:{client['client']}:{point['checkpoint']}", point["episodes"]
            types = len(point["types"])
            rows += [
                [section, "mean_success_over_types", point["mean_success_over_types"], None, None, types, "n: types"],
                [section, "success_pooled", point["success_pooled"], None, None, n, "solved / episodes ended"],
                [section, "people_mean_pass1", point["people_mean_pass1"], None, None, None, "people, same types"],
                [section, "failed", point["failed"], None, None, None, "episodes closed before their end"],
            ]
    return rows


def _contamination_rows(report: StudyReport) -> list[list[Any]]:
    """The report's puzzles trained on, people's answers on them, and whether they were left out."""
    found = report["contamination"]
    how = "left out of this report" if found["excluded"] else "counted in this report"
    return [
        ["contamination", "trained_puzzles", found["trained"], None, None, found["pool"], f"n: puzzles; {how}"],
        ["contamination", "people_answers_on_trained", found["people_answers"], None, None, None, how],
        *(
            [f"agent:{agent_name(agent, i)}", "trained_puzzles", agent["trained_on"], None, None, None, how]
            for i, agent in enumerate(report["agents"])
        ),
    ]


def to_summary_csv(report: StudyReport) -> str:
    """The report's summary as CSV, one figure a row (SUMMARY_COLUMNS), apart from the per-type data rows."""
    lines = [
        [section, measure, csv_number(value), csv_number(low), csv_number(high), csv_number(n), method]
        for section, measure, value, low, high, n, method in summary_rows(report)
    ]
    return csv_text([SUMMARY_COLUMNS, *lines])


# --- Markdown ---------------------------------------------------------------------------------


def md_text(value: object) -> str:
    """Text safe inside Markdown: HTML escaped, table pipes escaped, on one line."""
    text = escape(str(value), quote=False).replace("|", "\\|")
    return " ".join(text.split())


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table; the first column left-aligned, the others right."""
    lines = [
        "| " + " | ".join(md_text(h) for h in headers) + " |",
        "|" + "|".join([":---"] + ["---:"] * (len(headers) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in rows]
    return lines


def to_markdown(report: StudyReport) -> str:
    """The report as Markdown: title, annotators, per-type table, means, agreement and agents."""
    lines = [f"# Human baseline: {md_text(study_title(report))}", ""]
    facts = study_line(report)
    if facts:
        lines += [md_text(facts), ""]
    for line in public_truth_lines(report):
        lines += [f"> **Warning:** {md_text(line)}", ""]
    lines += [f"**Trained on:** {md_text(' '.join(contamination_lines(report)))}", ""]
    lines += [f"**Annotators:** {md_text(annotators_line(report))}", "", "## Per puzzle type", ""]
    types = report["types"]
    k = study_k(report)
    if types:
        rows = [type_row_cells(row, k) for row in types] + [overall_row_cells(report, k)]
        lines += md_table(type_table_headers(k), rows)
    else:
        lines.append("_No puzzle types with attempts._")
    dropped = dropped_types_line(report)
    lines += ["", md_text(dropped)] if dropped else []
    lines += ["", md_text(f"{PASS1_NOTE} {interval_note(report)}"), "", md_text(OUTCOME_NOTE), ""]
    lines += [md_text(TIME_NOTE), ""]
    lines += [f"- {md_text(line)}" for line in overall_lines(report)]
    lines += _versus_markdown(report)
    lines += ["", "## Pass@1 and time by position", "", md_text(position_note(report)), ""]
    positions = position_table_rows(report)
    lines += md_table(POSITION_HEADERS, positions) if positions else ["_No answers with a place._"]
    lines += ["", "## Agreement between people", "", md_text(AGREEMENT_NOTE), ""]
    lines += [f"- {md_text(line)}" for line in agreement_lines(report)]
    lines += ["", "## Agents on the same puzzles", ""]
    agents = report["agents"]
    if agents:
        lines += md_table(*agents_table(report))
        note = agents_mean_note(report)
        lines += ["", md_text(note)] if note else []
        lines.append("")
        for index, agent in enumerate(agents):
            lines.append(
                f"- **{md_text(agent_name(agent, index))}** ({md_text(agent_details(agent))}): "
                f"{md_text(agent_pass_at_text(agent))}"
            )
    else:
        lines.append("_No agents on these puzzles._")
    lines += _training_markdown(report)
    lines += _hosted_markdown(report)
    lines += ["", "## Pointer motion: people beside agents", "", md_text(MOTION_NOTE), ""]
    motion = motion_table_rows(report)
    lines += md_table(MOTION_HEADERS, motion) if motion else ["_No submitted attempts._"]
    lines += ["", md_text(motion_rule_line(report))] if motion else []
    return "\n".join(lines).rstrip() + "\n"


def _training_markdown(report: StudyReport) -> list[str]:
    """Per trainer, each checkpoint's success per type beside people's Pass@1."""
    lines = ["", "## Training runs: checkpoints against people", "", md_text(TRAINING_NOTE), ""]
    lines.append(md_text(training_scope_line(report)))
    for client in report["training"]["clients"]:
        lines += ["", f"### {md_text(client['client'])}", ""]
        lines += md_table(training_headers(client), training_table_rows(client, report["types"]))
        lines += [""] + [f"- {md_text(line)}" for line in training_details(client)]
    return lines


def _hosted_markdown(report: StudyReport) -> list[str]:
    """Per hosted benchmark: where its puzzles came from, its families, the set-aside ones, its people."""
    lines: list[str] = []
    for benchmark in report["hosted"]:
        lines += ["", f"## {md_text(hosted_wording.hosted_title(benchmark))}", ""]
        lines += [md_text(hosted_wording.source_line(benchmark)), "", md_text(hosted_wording.HOSTED_NOTE), ""]
        rows = hosted_wording.family_rows(benchmark)
        lines += md_table(hosted_wording.FAMILY_HEADERS, rows) if rows else ["_No family of it in this report._"]
        lines += [
            "",
            md_text(hosted_wording.pooled_line(benchmark)),
            "",
            md_text(hosted_wording.set_aside_line(benchmark)),
        ]
        people = hosted_wording.participant_rows(benchmark)
        if people:
            lines += ["", f"### {md_text(benchmark['name'])}: per participant", ""]
            lines += md_table(hosted_wording.PARTICIPANT_HEADERS, people)
    return lines


def _versus_markdown(report: StudyReport) -> list[str]:
    """The headline tables "People vs <run>", one per run."""
    lines = ["", "## People against agents on the same puzzles", "", md_text(VERSUS_NOTE)]
    if not report["versus"]:
        return [*lines, "", "_No agents on these puzzles._"]
    for index, versus in enumerate(report["versus"]):
        lines += ["", f"### {md_text(versus_title(versus, index))}", ""]
        rows = versus_table_rows(versus)
        if rows:
            lines += [*md_table(versus_headers(versus, index), rows), "", md_text(versus_method_line(versus))]
        else:
            lines.append("_No puzzle answered by both._")
        unpaired = versus_unpaired_line(report, versus)
        lines += ["", md_text(unpaired)] if unpaired else []
    return lines


# --- HTML page: the context of templates/reporting/report.html ----------------------------------


# Where a cell may wrap on a narrow page: before its interval or its detail in brackets ("47.1%" |
# "[18.8, 72.2]", "5.2" | "(3.9–7.1)"), never inside one of them.
CELL_BREAK = re.compile(r" (?=[\[(])")


def html_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], colours: dict[int, str] | None = None
) -> dict[str, Any]:
    """A table for reporting/table.html: each header with the colour of its swatch, if any, and the
    rows, each cell as the pieces it may wrap between (CELL_BREAK)."""
    colours = colours or {}
    return {
        "headers": [{"text": h, "colour": colours.get(i)} for i, h in enumerate(headers)],
        "rows": [[CELL_BREAK.split(cell) for cell in row] for row in rows],
    }


def fact_cards(report: StudyReport) -> list[tuple[str, str]]:
    """The header's grid of key numbers, as (number, what it counts)."""
    study = report["study"]
    overall = report["overall"]
    k = study_k(report)
    limit = study["time_limit_s"]
    cards = [
        (fmt_count(report["annotators"]), f"annotators ({fmt_count(report['excluded_annotators'])} excluded)"),
        (fmt_count(len(report["types"])), "puzzle types"),
        (fmt_count(overall["attempts"]), f"answers on {fmt_count(overall['puzzles'])} puzzles"),
        (
            fmt_pct(overall["mean_pass1_over_types"]),
            f"mean Pass@1 over types {fmt_interval(overall['mean_ci_low'], overall['mean_ci_high']) or ''}",
        ),
        (
            fmt_pct(overall["pass1_pooled"]),
            f"pooled Pass@1 {fmt_interval(overall['ci_low'], overall['ci_high']) or DASH}",
        ),
    ]
    if k > 1:
        low, high = overall["mean_pass_k_ci_low"], overall["mean_pass_k_ci_high"]
        cards.append(
            (fmt_pct(overall["mean_pass_k_over_types"]), f"mean Pass@{k} over types {fmt_interval(low, high)}")
        )
    cards += [
        (
            fmt_count(overall["timed_out"]),
            f"timed out ({fmt_count(overall['wrong'])} wrong)"
            + (f", limit {fmt_count(limit)} s" if is_number(limit) else ""),
        ),
        (fmt_count(study["overlap"]), "people per puzzle (overlap)"),
        (fmt_count(study["attempts_per_puzzle"]), "attempts per puzzle each"),
        (fmt_count(len(report["agents"])), "agents compared"),
    ]
    if public_truth_lines(report):  # only when there are some: a zero would read as noise
        cards.append((fmt_count(report["public_truth_puzzles"]), "puzzles with public truth (answers a lookup away)"))
    return cards


def types_html_table(report: StudyReport) -> dict[str, Any] | None:
    """The per-type table closing with the means; None without types."""
    types = report["types"]
    if not types:
        return None
    k = study_k(report)
    return html_table(type_table_headers(k), [type_row_cells(row, k) for row in types] + [overall_row_cells(report, k)])


def agents_html_table(report: StudyReport) -> dict[str, Any] | None:
    """People against each agent, each column headed by its chart colour; None without agents."""
    agents = report["agents"]
    if not agents:
        return None
    colours = {1: PEOPLE_COLOUR} | {i + 2: agent_colour(i) for i in range(len(agents))}
    return html_table(*agents_table(report), colours=colours)


def agent_items(report: StudyReport) -> list[dict[str, str]]:
    """Each agent with its colour, where its numbers come from and its Pass@k, for the list under the table."""
    return [
        {
            "colour": agent_colour(i),
            "name": agent_name(agent, i),
            "details": agent_details(agent),
            "pass_at": agent_pass_at_text(agent),
        }
        for i, agent in enumerate(report["agents"])
    ]


def versus_items(report: StudyReport) -> list[dict[str, Any]]:
    """Each run's headline table, its method line and its scatter, for the page."""
    return [
        {
            "title": versus_title(versus, index),
            "table": html_table(versus_headers(versus, index), rows) if (rows := versus_table_rows(versus)) else None,
            "method": versus_method_line(versus),
            "unpaired": versus_unpaired_line(report, versus),
            "scatter": charts.scatter_chart(versus, agent_colour(index)),
        }
        for index, versus in enumerate(report["versus"])
    ]


def training_items(report: StudyReport) -> list[dict[str, Any]]:
    """Each trainer's table, checkpoint details and progress chart, for the page."""
    return [
        {
            "client": client["client"],
            "table": html_table(training_headers(client), training_table_rows(client, report["types"])),
            "details": training_details(client),
            "chart": charts.training_chart(client, agent_colour(index)),
        }
        for index, client in enumerate(report["training"]["clients"])
    ]


def hosted_items(report: StudyReport) -> list[dict[str, Any]]:
    """Each hosted benchmark's provenance, family table, set-aside families and people, for the page."""
    return [
        {
            "title": hosted_wording.hosted_title(benchmark),
            "source": hosted_wording.source_line(benchmark),
            "table": html_table(hosted_wording.FAMILY_HEADERS, rows)
            if (rows := hosted_wording.family_rows(benchmark))
            else None,
            "pooled": hosted_wording.pooled_line(benchmark),
            "set_aside": hosted_wording.set_aside_line(benchmark),
            "people": html_table(hosted_wording.PARTICIPANT_HEADERS, people)
            if (people := hosted_wording.participant_rows(benchmark))
            else None,
        }
        for benchmark in report["hosted"]
    ]


def html_context(report: StudyReport) -> dict[str, Any]:
    """All that the page shows, as plain text and chart geometry: the templates escape every string."""
    return {
        "title": study_title(report),
        "study_line": study_line(report) or DASH,
        "facts": fact_cards(report),
        "types_table": types_html_table(report),
        "dropped_line": dropped_types_line(report),
        "pass1_note": f"{PASS1_NOTE} {interval_note(report)}",
        "outcome_note": OUTCOME_NOTE,
        "time_note": TIME_NOTE,
        "agreement_note": AGREEMENT_NOTE,
        "time_definition": TIME_DEFINITION,
        "overall_lines": public_truth_lines(report) + overall_lines(report),  # the warning first
        "pass1_chart": charts.pass1_chart(report),
        "time_chart": charts.time_chart(report),
        "versus_note": VERSUS_NOTE,
        "versus": versus_items(report),
        "position_note": position_note(report),
        "position_table": html_table(POSITION_HEADERS, rows) if (rows := position_table_rows(report)) else None,
        "agreement_lines": agreement_lines(report),
        "agents_table": agents_html_table(report),
        "agents_note": agents_mean_note(report),
        "agents": agent_items(report),
        "contamination_lines": contamination_lines(report),
        "training_note": TRAINING_NOTE,
        "training_scope": training_scope_line(report),
        "training": training_items(report),
        "hosted_note": hosted_wording.HOSTED_NOTE,
        "hosted": hosted_items(report),
        "motion_note": MOTION_NOTE,
        "motion_table": html_table(MOTION_HEADERS, rows) if (rows := motion_table_rows(report)) else None,
        "motion_rule": motion_rule_line(report),
        "generated": report["generated_at"] or DASH,
    }


def to_html(report: StudyReport) -> str:
    """The report as one self-contained HTML page: inline CSS and SVG, no scripts, no external URLs."""
    return render_to_string("reporting/report.html", html_context(report))


FORMATS = {
    "html": "text/html",
    "csv": "text/csv",
    "summary.csv": "text/csv",
    "json": "application/json",
    "md": "text/markdown",
}  # and their media types; csv holds the per-type rows, summary.csv the overall figures


def render(report: StudyReport, fmt: str) -> str:
    """The report in one of FORMATS (json is the report itself)."""
    if fmt == "json":
        return json.dumps(report, indent=2)
    renderers: dict[str, Callable[[StudyReport], str]] = {
        "csv": to_csv,
        "summary.csv": to_summary_csv,
        "md": to_markdown,
        "html": to_html,
    }
    return renderers[fmt](report)
