"""Render a study report dict as CSV, Markdown, JSON, or one self-contained HTML page.

The wording (numbers, names, shared sentences) comes from wording.py; this module owns the
formats. Study, type and agent names can hold markup: the Markdown escapes them here, and the HTML page is
drawn by Django templates (templates/reporting/) whose autoescaping covers every string taken
from the report; its charts are geometry computed in charts.py. No database, no network.

    to_csv(report) -> str       one row per puzzle type, then a "MEAN OVER TYPES" row
    to_markdown(report) -> str  tables and lines for a README, an issue or a pull request
    to_html(report) -> str      a whole page: inline CSS and inline SVG charts, no scripts, no URLs
    render(report, fmt) -> str  any of FORMATS, json being the report itself
"""

from __future__ import annotations

import csv
import io
import json
from html import escape

from django.template.loader import render_to_string

from annotation.reporting import charts
from annotation.reporting.wording import (
    CSV_TYPE_COLUMNS,
    DASH,
    MEAN_ROW_LABEL,
    PASS1_NOTE,
    PEOPLE_COLOUR,
    TIME_DEFINITION,
    TIME_NOTE,
    TYPE_TABLE_HEADERS,
    agent_colour,
    agent_details,
    agent_name,
    agent_overall_pass1,
    agent_pass_at_text,
    agent_types,
    agents_of,
    agents_table,
    agreement_lines,
    annotators_line,
    fmt_count,
    fmt_interval,
    fmt_pct,
    overall_lines,
    overall_row_cells,
    public_truth_lines,
    study_line,
    study_of,
    study_title,
    type_name,
    type_row_cells,
    types_of,
)

# --- CSV --------------------------------------------------------------------------------------


def csv_cell(value):
    """A value as the csv module should write it: None as empty, numbers unrounded."""
    return "" if value is None else value


def to_csv(report: dict) -> str:
    """One header row, one row per puzzle type, then the MEAN OVER TYPES row.

    Columns are CSV_TYPE_COLUMNS and then agent:<name>:pass1 for each agent; a missing value is an
    empty cell and floats are written unrounded.
    """
    agents = agents_of(report)
    agent_columns = [f"agent:{agent_name(a, i)}:pass1" for i, a in enumerate(agents)]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*CSV_TYPE_COLUMNS, *agent_columns])
    per_agent = [agent_types(agent) for agent in agents]
    for row in types_of(report):
        name = type_name(row)
        values = [csv_cell(row.get(column)) for column in CSV_TYPE_COLUMNS]
        values += [csv_cell(by_type.get(name, {}).get("pass1")) for by_type in per_agent]
        writer.writerow(values)
    mean = {"type": MEAN_ROW_LABEL, "pass1": (report.get("overall") or {}).get("mean_pass1_over_types")}
    writer.writerow(
        [csv_cell(mean.get(column)) for column in CSV_TYPE_COLUMNS]
        + [csv_cell(agent_overall_pass1(agent)) for agent in agents]
    )
    return out.getvalue()


# --- Markdown ---------------------------------------------------------------------------------


def md_text(value) -> str:
    """Text safe inside Markdown: HTML escaped, table pipes escaped, on one line."""
    text = escape(str(value), quote=False).replace("|", "\\|")
    return " ".join(text.split())


def md_table(headers, rows) -> list[str]:
    """A GitHub-flavoured Markdown table; the first column left-aligned, the others right."""
    lines = [
        "| " + " | ".join(md_text(h) for h in headers) + " |",
        "|" + "|".join([":---"] + ["---:"] * (len(headers) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in rows]
    return lines


def to_markdown(report: dict) -> str:
    """The report as Markdown: title, annotators, per-type table, means, agreement and agents."""
    lines = [f"# Human baseline: {md_text(study_title(report))}", ""]
    facts = study_line(report)
    if facts:
        lines += [md_text(facts), ""]
    for line in public_truth_lines(report):
        lines += [f"> **Warning:** {md_text(line)}", ""]
    lines += [f"**Annotators:** {md_text(annotators_line(report))}", "", "## Per puzzle type", ""]
    types = types_of(report)
    if types:
        lines += md_table(TYPE_TABLE_HEADERS, [type_row_cells(row) for row in types] + [overall_row_cells(report)])
    else:
        lines.append("_No puzzle types with attempts._")
    lines += ["", md_text(PASS1_NOTE), "", md_text(TIME_NOTE), ""]
    lines += [f"- {md_text(line)}" for line in overall_lines(report)]
    lines += ["", "## Agreement between people", ""]
    lines += [f"- {md_text(line)}" for line in agreement_lines(report)]
    lines += ["", "## Agents on the same puzzles", ""]
    agents = agents_of(report)
    if agents:
        lines += md_table(*agents_table(report))
        lines.append("")
        for index, agent in enumerate(agents):
            lines.append(
                f"- **{md_text(agent_name(agent, index))}** ({md_text(agent_details(agent))}): "
                f"{md_text(agent_pass_at_text(agent))}"
            )
    else:
        lines.append("_No agents on these puzzles._")
    return "\n".join(lines).rstrip() + "\n"


# --- HTML page: the context of templates/reporting/report.html ----------------------------------


def html_table(headers, rows, colours: dict[int, str] | None = None) -> dict:
    """A table for reporting/table.html: each header with the colour of its swatch, if any, and the rows."""
    colours = colours or {}
    return {"headers": [{"text": h, "colour": colours.get(i)} for i, h in enumerate(headers)], "rows": rows}


def fact_cards(report: dict) -> list[tuple[str, str]]:
    """The header's grid of key numbers, as (number, what it counts)."""
    study = study_of(report)
    overall = report.get("overall") or {}
    cards = [
        (fmt_count(report.get("annotators")), f"annotators ({fmt_count(report.get('excluded_annotators'))} excluded)"),
        (fmt_count(len(types_of(report))), "puzzle types"),
        (fmt_count(overall.get("attempts")), f"attempts on {fmt_count(overall.get('puzzles'))} puzzles"),
        (fmt_pct(overall.get("mean_pass1_over_types")), "mean Pass@1 over types"),
        (
            fmt_pct(overall.get("pass1_pooled")),
            f"pooled Pass@1 {fmt_interval(overall.get('ci_low'), overall.get('ci_high')) or DASH}",
        ),
        (fmt_count(study.get("overlap")), "people per puzzle (overlap)"),
        (fmt_count(study.get("attempts_per_puzzle")), "attempts per puzzle each"),
        (fmt_count(len(agents_of(report))), "agents compared"),
    ]
    if public_truth_lines(report):  # only when there are some: a zero would read as noise
        cards.append((fmt_count(report["public_truth_puzzles"]), "puzzles with public truth (answers a lookup away)"))
    return cards


def types_html_table(report: dict) -> dict | None:
    """The per-type table closing with the means; None without types."""
    types = types_of(report)
    if not types:
        return None
    return html_table(TYPE_TABLE_HEADERS, [type_row_cells(row) for row in types] + [overall_row_cells(report)])


def agents_html_table(report: dict) -> dict | None:
    """People against each agent, each column headed by its chart colour; None without agents."""
    agents = agents_of(report)
    if not agents:
        return None
    colours = {1: PEOPLE_COLOUR} | {i + 2: agent_colour(i) for i in range(len(agents))}
    return html_table(*agents_table(report), colours=colours)


def agent_items(report: dict) -> list[dict]:
    """Each agent with its colour, where its numbers come from and its Pass@k, for the list under the table."""
    return [
        {
            "colour": agent_colour(i),
            "name": agent_name(agent, i),
            "details": agent_details(agent),
            "pass_at": agent_pass_at_text(agent),
        }
        for i, agent in enumerate(agents_of(report))
    ]


def html_context(report: dict) -> dict:
    """All that the page shows, as plain text and chart geometry: the templates escape every string."""
    return {
        "title": study_title(report),
        "study_line": study_line(report) or DASH,
        "facts": fact_cards(report),
        "types_table": types_html_table(report),
        "pass1_note": PASS1_NOTE,
        "time_note": TIME_NOTE,
        "time_definition": TIME_DEFINITION,
        "overall_lines": public_truth_lines(report) + overall_lines(report),  # the warning first
        "pass1_chart": charts.pass1_chart(report),
        "time_chart": charts.time_chart(report),
        "agreement_lines": agreement_lines(report),
        "agents_table": agents_html_table(report),
        "agents": agent_items(report),
        "generated": str(report.get("generated_at") or DASH),
    }


def to_html(report: dict) -> str:
    """The report as one self-contained HTML page: inline CSS and SVG, no scripts, no external URLs."""
    return render_to_string("reporting/report.html", html_context(report))


FORMATS = {
    "html": "text/html",
    "csv": "text/csv",
    "json": "application/json",
    "md": "text/markdown",
}  # and their media types


def render(report: dict, fmt: str) -> str:
    """The report in one of FORMATS (json is the report itself)."""
    if fmt == "json":
        return json.dumps(report, indent=2)
    return {"csv": to_csv, "md": to_markdown, "html": to_html}[fmt](report)
