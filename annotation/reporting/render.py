"""Render a study report dict as CSV, Markdown, or one self-contained HTML page.

Pure: standard library only, no Django, no database, no network. Any number in the report may be
None and any list may be empty; such gaps show as "–" (an empty cell in the CSV). Every string
taken from the report is escaped in the Markdown and the HTML: study and agent names can hold
markup.

    to_csv(report) -> str       one row per puzzle type, then a "MEAN OVER TYPES" row
    to_markdown(report) -> str  tables and lines for a README, an issue or a pull request
    to_html(report) -> str      a whole page: inline CSS and inline SVG charts, no scripts, no URLs
"""

from __future__ import annotations

import csv
import io
import json
import math
from html import escape

DASH = "–"
MEAN_ROW_LABEL = "MEAN OVER TYPES"
CSV_TYPE_COLUMNS = (
    "type",
    "attempts",
    "puzzles",
    "correct",
    "pass1",
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
)
TYPE_TABLE_HEADERS = (
    "Type",
    "Pass@1 [95% CI]",
    "Correct",
    "Attempts / puzzles",
    "Submitted",
    "Wall time, s: median (IQR)",
    "Active time, s: median (IQR)",
    "Mean actions",
)
PASS1_NOTE = "Pass@1: share of attempts solved, with its 95% Wilson interval in brackets."
BOX_NOTE = (
    "Box: interquartile range; line: median; whiskers: the furthest attempt within 1.5 IQR "
    "of the box; circles: attempts beyond. Log scale, so that slow outliers leave the rest readable."
)
TIME_DEFINITION = (
    "Wall time runs from the first event of an attempt to its submit; active time "
    "leaves out the time the page was hidden."
)
TIME_NOTE = TIME_DEFINITION + " Times in seconds: median with the interquartile range (Q1–Q3)."

# Colours, shared by the tables, the legend and the charts.
PEOPLE_COLOUR = "#2563eb"
AGENT_COLOURS = ("#f59e0b", "#059669", "#dc2626", "#7c3aed", "#db2777", "#0891b2", "#65a30d", "#475569")
WALL_COLOUR = "#94a3b8"
ACTIVE_COLOUR = "#60a5fa"
INK = "#1f2937"
MUTED = "#6b7280"
GRID = "#e5e7eb"

# Chart geometry, in SVG user units (the SVG scales to the page width).
CHART_WIDTH = 960
CHART_RIGHT_PAD = 64  # room for the value printed after a bar that reaches 100%
CHART_TOP = 12
AXIS_HEIGHT = 48
CHAR_WIDTH = 7.0  # rough width of one 12-unit character, to size the label column and legend
MIN_SECONDS = 0.05  # floor for the log time axis; a zero time is drawn here
LOG_STEPS = (1, 2, 5)  # labelled ticks on the log axis: 1, 2, 5, 10, 20, 50 ...

PAGE_CSS = """
*{box-sizing:border-box}
body{margin:0;background:#f8fafc;color:#1f2937;font:15px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1080px;margin:0 auto;padding:32px 28px 48px}
h1{font-size:28px;margin:0 0 4px;line-height:1.2;overflow-wrap:anywhere}
h2{font-size:19px;margin:0 0 6px}
.kicker{text-transform:uppercase;letter-spacing:.08em;font-size:12px;color:#6b7280;margin:0 0 6px}
.meta{color:#6b7280;margin:0 0 18px}
section{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:20px 22px;margin:0 0 20px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px;margin:0 0 20px}
.fact{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:10px 14px}
.fact b{display:block;font-size:20px;font-variant-numeric:tabular-nums}
.fact span{color:#6b7280;font-size:13px}
.note{color:#6b7280;font-size:13px;margin:6px 0 12px}
.empty{color:#6b7280;font-style:italic}
.scroll,.chart{overflow-x:auto}
.chart svg{min-width:640px}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{padding:6px 10px;border-bottom:1px solid #e5e7eb;text-align:right;white-space:nowrap}
th{font-size:13px;color:#4b5563;font-weight:600;
vertical-align:bottom;white-space:normal}
th:first-child,td:first-child{text-align:left}
td{font-variant-numeric:tabular-nums}
tbody tr:nth-child(even){background:#f9fafb}
tr.mean td{font-weight:600;border-top:2px solid #d1d5db;background:#fff}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;vertical-align:0}
ul.plain{margin:8px 0 0;padding-left:20px}
ul.plain li{margin:2px 0}
svg{display:block;width:100%;height:auto;font-family:inherit}
svg text{font-size:12px;fill:#1f2937}
svg .tick{fill:#6b7280;font-size:11px}
svg .axis-title{fill:#374151;font-size:12px;font-weight:600}
footer{color:#9ca3af;font-size:12px;text-align:center}
"""


# --- small formatters -------------------------------------------------------------------------


def is_number(value) -> bool:
    """True for a finite int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def fmt_pct(value, digits: int = 1, sign: bool = True) -> str:
    """A proportion as a percent ("87.5%"); "–" when missing."""
    if not is_number(value):
        return DASH
    return f"{value * 100:.{digits}f}" + ("%" if sign else "")


def fmt_interval(low, high) -> str:
    """A 95% interval of proportions as percents in brackets ("[73.9, 94.6]"); "" when missing."""
    if not (is_number(low) and is_number(high)):
        return ""
    return f"[{fmt_pct(low, sign=False)}, {fmt_pct(high, sign=False)}]"


def fmt_pass1(value, low=None, high=None) -> str:
    """Pass@1 with its interval when known ("87.5% [73.9, 94.6]"); "–" when missing."""
    if not is_number(value):
        return DASH
    interval = fmt_interval(low, high)
    return f"{fmt_pct(value)} {interval}" if interval else fmt_pct(value)


def fmt_number(value, digits: int = 1) -> str:
    """A number with fixed decimals; "–" when missing."""
    return f"{value:.{digits}f}" if is_number(value) else DASH


def fmt_count(value) -> str:
    """A count as an integer; "–" when missing."""
    return str(int(value)) if is_number(value) else DASH


def fmt_seconds(ms) -> str:
    """Milliseconds as seconds with one decimal ("5.2"); "–" when missing."""
    return fmt_number(ms / 1000) if is_number(ms) else DASH


def fmt_time(median_ms, q1_ms, q3_ms) -> str:
    """A median time with its IQR in seconds ("5.2 (3.9–7.1)"); "–" when missing."""
    if not is_number(median_ms):
        return DASH
    if is_number(q1_ms) and is_number(q3_ms):
        return f"{fmt_seconds(median_ms)} ({fmt_seconds(q1_ms)}–{fmt_seconds(q3_ms)})"
    return fmt_seconds(median_ms)


def plural(count, noun: str) -> str:
    """A count with its noun, plural unless the count is 1 ("1 attempt", "3 attempts")."""
    return f"{fmt_count(count)} {noun}{'' if count == 1 else 's'}"


def fmt_agreement(value) -> str:
    """A kappa or alpha with two decimals and a real minus sign; "–" when missing."""
    return fmt_number(value, 2).replace("-", "−")


def pass_k_items(pass_k) -> list[tuple[int, float]]:
    """(k, value) pairs from a {"5": 0.6} mapping, by k, dropping k = 1 and missing values."""
    if not isinstance(pass_k, dict):
        return []
    items = []
    for key, value in pass_k.items():
        try:
            k = int(key)
        except (TypeError, ValueError):
            continue
        if k > 1 and is_number(value):
            items.append((k, value))
    return sorted(items)


def fmt_pass_cell(pass1, pass_k=None) -> str:
    """Pass@1 and any Pass@k of one type, for the agents table ("35.0% · pass@5 60.0%")."""
    extras = [f"pass@{k} {fmt_pct(v)}" for k, v in pass_k_items(pass_k)]
    return " · ".join([fmt_pct(pass1), *extras])


# --- reading the report -----------------------------------------------------------------------


def study_of(report: dict) -> dict:
    """The study facts, {} when missing."""
    return report.get("study") or {}


def types_of(report: dict) -> list[dict]:
    """The per-type rows, [] when missing."""
    return list(report.get("types") or [])


def agents_of(report: dict) -> list[dict]:
    """The agents, [] when missing."""
    return list(report.get("agents") or [])


def type_name(row: dict) -> str:
    """A per-type row's type name, "–" when it has none."""
    name = row.get("type")
    return str(name) if name not in (None, "") else DASH


def agent_name(agent: dict, index: int) -> str:
    """An agent's name, or "agent N" when it has none."""
    name = agent.get("name")
    return str(name) if name not in (None, "") else f"agent {index + 1}"


def agent_types(agent: dict) -> dict[str, dict]:
    """An agent's per-type rows by type name."""
    return {type_name(row): row for row in agent.get("types") or []}


def agent_overall_pass1(agent: dict):
    """An agent's mean Pass@1 over types, else its overall pass@1, else None."""
    value = agent.get("mean_pass1_over_types")
    if is_number(value):
        return value
    return (agent.get("pass_at") or {}).get("1")


def all_type_names(report: dict) -> list[str]:
    """People's types in report order, then any type only an agent has, by name."""
    names = [type_name(row) for row in types_of(report)]
    extra = {t for agent in agents_of(report) for t in agent_types(agent)} - set(names)
    return names + sorted(extra)


def study_title(report: dict) -> str:
    """The study's name, or "Study N" when it has none."""
    study = study_of(report)
    name = study.get("name")
    if name not in (None, ""):
        return str(name)
    return f"Study {study.get('id')}" if study.get("id") is not None else "Study"


def annotators_line(report: dict) -> str:
    """How many people are counted and how many were left out."""
    return f"{fmt_count(report.get('annotators'))} annotators ({fmt_count(report.get('excluded_annotators'))} excluded)"


def study_line(report: dict) -> str:
    """Study id, split, overlap, attempts per puzzle and the generation time, on one line."""
    study = study_of(report)
    parts = [
        f"Study #{study['id']}" if study.get("id") is not None else None,
        f"split {study['split']}" if study.get("split") not in (None, "") else None,
        f"overlap {study['overlap']}" if study.get("overlap") is not None else None,
        (
            plural(study["attempts_per_puzzle"], "attempt") + " per puzzle per person"
            if is_number(study.get("attempts_per_puzzle"))
            else None
        ),
        f"generated {report['generated_at']}" if report.get("generated_at") else None,
    ]
    return " · ".join(str(p) for p in parts if p)


# --- tables shared by Markdown and HTML (plain text; escaped by the renderer) -------------------


def type_row_cells(row: dict) -> list[str]:
    """One puzzle type as table cells, in TYPE_TABLE_HEADERS order."""
    submitted = fmt_pct(row.get("submission_rate"))
    if submitted != DASH and is_number(row.get("submitted")) and is_number(row.get("started")):
        submitted += f" ({fmt_count(row['submitted'])}/{fmt_count(row['started'])})"
    return [
        type_name(row),
        fmt_pass1(row.get("pass1"), row.get("ci_low"), row.get("ci_high")),
        fmt_count(row.get("correct")),
        f"{fmt_count(row.get('attempts'))} / {fmt_count(row.get('puzzles'))}",
        submitted,
        fmt_time(row.get("wall_median_ms"), row.get("wall_q1_ms"), row.get("wall_q3_ms")),
        fmt_time(row.get("active_median_ms"), row.get("active_q1_ms"), row.get("active_q3_ms")),
        fmt_number(row.get("mean_actions")),
    ]


def overall_row_cells(report: dict) -> list[str]:
    """The closing row of the type table: the mean over types and the pooled counts."""
    overall = report.get("overall") or {}
    cells = [DASH] * len(TYPE_TABLE_HEADERS)
    cells[0] = "All types"
    mean = fmt_pct(overall.get("mean_pass1_over_types"))
    cells[1] = f"mean {mean}" if mean != DASH else DASH
    cells[2] = fmt_count(overall.get("correct"))
    cells[3] = f"{fmt_count(overall.get('attempts'))} / {fmt_count(overall.get('puzzles'))}"
    return cells


def overall_lines(report: dict) -> list[str]:
    """The mean over types and the pooled Pass@1, as sentences."""
    overall = report.get("overall") or {}
    return [
        f"Mean Pass@1 over types: {fmt_pct(overall.get('mean_pass1_over_types'))} (each type weighs the same).",
        f"Pooled Pass@1: {fmt_pass1(overall.get('pass1_pooled'), overall.get('ci_low'), overall.get('ci_high'))}"
        f" — {fmt_count(overall.get('correct'))} of {fmt_count(overall.get('attempts'))} attempts "
        f"on {fmt_count(overall.get('puzzles'))} puzzles.",
    ]


def agreement_lines(report: dict) -> list[str]:
    """Fleiss' kappa and Krippendorff's alpha with their n, or why there is none."""
    agreement = report.get("agreement")
    if not agreement:
        overlap = study_of(report).get("overlap")
        if overlap is None or (is_number(overlap) and overlap <= 1):
            return ["n/a (overlap 1)"]
        return [f"n/a (overlap {overlap}, but no puzzle was rated by two people)"]
    return [
        f"Fleiss' κ = {fmt_agreement(agreement.get('fleiss_kappa'))} "
        f"(n = {fmt_count(agreement.get('fleiss_n'))} puzzles)",
        f"Krippendorff's α = {fmt_agreement(agreement.get('krippendorff_alpha'))} "
        f"(n = {fmt_count(agreement.get('alpha_n'))} puzzles)",
    ]


def agents_table(report: dict) -> tuple[list[str], list[list[str]]]:
    """People against each agent per type (Pass@1, then any Pass@k), closing with the means."""
    agents = agents_of(report)
    people = {type_name(row): row for row in types_of(report)}
    per_agent = [agent_types(agent) for agent in agents]
    headers = ["Type", "People", *(agent_name(a, i) for i, a in enumerate(agents))]
    rows = []
    for name in all_type_names(report):
        person = people.get(name, {})
        cells = [name, fmt_pass_cell(person.get("pass1"), person.get("pass_k"))]
        for rows_by_type in per_agent:
            row = rows_by_type.get(name, {})
            cells.append(fmt_pass_cell(row.get("pass1"), row.get("pass_k")))
        rows.append(cells)
    overall = report.get("overall") or {}
    rows.append(
        [
            "Mean over types",
            fmt_pct(overall.get("mean_pass1_over_types")),
            *(fmt_pct(agent_overall_pass1(a)) for a in agents),
        ]
    )
    return headers, rows


def agent_details(agent: dict) -> str:
    """Where an agent's numbers come from: source, model and rollouts per puzzle."""
    parts = [
        f"source {agent['source']}" if agent.get("source") else None,
        f"model {agent['model']}" if agent.get("model") else None,
        (
            f"{fmt_count(agent['rollouts_per_puzzle'])} rollouts per puzzle"
            if is_number(agent.get("rollouts_per_puzzle"))
            else None
        ),
    ]
    return ", ".join(str(p) for p in parts if p) or DASH


def agent_pass_at_text(agent: dict) -> str:
    """An agent's overall Pass@k values ("Pass@1 35.0% · Pass@5 60.0%")."""
    pass_at = agent.get("pass_at") or {}
    items = []
    for key, value in pass_at.items():
        try:
            items.append((int(key), value))
        except (TypeError, ValueError):
            continue
    if not items:
        return f"Pass@1 {fmt_pct(agent_overall_pass1(agent))}"
    return " · ".join(f"Pass@{k} {fmt_pct(v)}" for k, v in sorted(items))


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


# --- SVG helpers ------------------------------------------------------------------------------


def num(value: float) -> str:
    """A coordinate with at most one decimal, for compact SVG."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def svg_text(x, y, text, cls: str = "", anchor: str = "start", extra: str = "") -> str:
    """An escaped <text> element."""
    cls_attr = f' class="{cls}"' if cls else ""
    return (
        f'<text x="{num(x)}" y="{num(y)}" text-anchor="{anchor}" dominant-baseline="middle"'
        f"{cls_attr}{extra}>{escape(str(text))}</text>"
    )


def svg_line(x1, y1, x2, y2, colour: str, width: float = 1, extra: str = "") -> str:
    """A <line> element."""
    return (
        f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
        f'stroke="{colour}" stroke-width="{num(width)}"{extra}/>'
    )


def svg_rect(x, y, w, h, fill: str, cls: str, tip: str, extra: str = "") -> str:
    """A <rect> with a class and a hover tooltip (<title>)."""
    return (
        f'<rect class="{cls}" x="{num(x)}" y="{num(y)}" width="{num(max(w, 0))}" '
        f'height="{num(h)}" fill="{fill}"{extra}><title>{escape(tip)}</title></rect>'
    )


def svg_open(height: float, label: str) -> str:
    """The opening <svg> tag; no xmlns needed inline in HTML, which keeps the page free of URLs."""
    return f'<svg viewBox="0 0 {CHART_WIDTH} {num(height)}" role="img" aria-label="{escape(label)}">'


def label_width(labels: list[str]) -> float:
    """Width of the category label column, sized to the longest label."""
    longest = max((len(label) for label in labels), default=8)
    return min(240.0, max(110.0, longest * CHAR_WIDTH + 18))


def clip_label(label: str, width: float) -> str:
    """A label shortened with an ellipsis to fit the label column."""
    fits = max(4, int((width - 18) / CHAR_WIDTH))
    return label if len(label) <= fits else label[: fits - 1] + "…"


def legend_html(items: list[tuple[str, str]]) -> str:
    """A legend row of (colour, text) swatches, as HTML above a chart (it wraps by itself)."""
    spans = [
        f'<span class="legend-item"><span class="swatch" style="background:{colour}"></span>{escape(text)}</span>'
        for colour, text in items
    ]
    return f'<div class="legend">{"".join(spans)}</div>'


# --- Chart 1: Pass@1 per type, people with CIs beside agents ------------------------------------


def pass1_rows(report: dict) -> list[dict]:
    """Per type: the label, people's Pass@1 and CI, and each agent's Pass@1 (None when missing)."""
    people = {type_name(row): row for row in types_of(report)}
    per_agent = [agent_types(agent) for agent in agents_of(report)]
    rows = []
    for name in all_type_names(report):
        person = people.get(name, {})
        rows.append(
            {
                "label": name,
                "pass1": person.get("pass1"),
                "low": person.get("ci_low"),
                "high": person.get("ci_high"),
                "correct": person.get("correct"),
                "attempts": person.get("attempts"),
                "agents": [by_type.get(name, {}).get("pass1") for by_type in per_agent],
            }
        )
    return rows


def pct_axis(x0: float, x1: float, top: float, bottom: float) -> list[str]:
    """Vertical grid every 10% with labels every 20%, and the axis title, from 0 to 100%."""
    parts = []
    for step in range(11):
        x = x0 + (x1 - x0) * step / 10
        parts.append(svg_line(x, top, x, bottom, GRID if step % 2 else "#d1d5db", 1))
        if step % 2 == 0:
            parts.append(svg_text(x, bottom + 14, f"{step * 10}%", "tick", "middle"))
    parts.append(
        svg_text(
            (x0 + x1) / 2,
            bottom + 36,
            "Pass@1 (% of attempts solved; whiskers: 95% Wilson interval)",
            "axis-title",
            "middle",
        )
    )
    return parts


def people_bar(row: dict, x_of, y: float, height: float, cls: str) -> list[str]:
    """People's bar for one row, with its CI whisker and value label."""
    value = row["pass1"]
    if not is_number(value):
        return [svg_text(x_of(0) + 4, y + height / 2, f"{DASH} no attempts", "tick")]
    tip = f"{row['label']}: people {fmt_pass1(value, row['low'], row['high'])}"
    if is_number(row.get("attempts")):
        tip += f", {fmt_count(row.get('correct'))} of {fmt_count(row['attempts'])} attempts"
    parts = [svg_rect(x_of(0), y, x_of(value) - x_of(0), height, PEOPLE_COLOUR, cls, tip, ' rx="2"')]
    right = x_of(value)
    if is_number(row["low"]) and is_number(row["high"]):
        mid, lo, hi = y + height / 2, x_of(row["low"]), x_of(row["high"])
        parts += [
            svg_line(lo, mid, hi, mid, INK, 1.5, ' class="ci"'),
            svg_line(lo, mid - 5, lo, mid + 5, INK, 1.5),
            svg_line(hi, mid - 5, hi, mid + 5, INK, 1.5),
        ]
        right = max(right, hi)
    parts.append(svg_text(right + 6, y + height / 2, fmt_pct(value), extra=' font-weight="600"'))
    return parts


def agent_bar(label: str, agent: str, value, colour: str, x_of, y: float, height: float) -> list[str]:
    """One agent's thin bar for one row, with its value label."""
    if not is_number(value):
        return [svg_text(x_of(0) + 4, y + height / 2, DASH, "tick")]
    tip = f"{label}: {agent} {fmt_pct(value)}"
    return [
        svg_rect(x_of(0), y, x_of(value) - x_of(0), height, colour, "bar-agent", tip, ' rx="1"'),
        svg_text(x_of(value) + 5, y + height / 2, fmt_pct(value), "tick"),
    ]


def pass1_chart(report: dict) -> str:
    """Chart 1: horizontal Pass@1 bars per type with CI whiskers, agents' thinner bars beneath."""
    rows = pass1_rows(report)
    if not rows:
        return f'<p class="empty">No puzzle types with attempts {DASH} nothing to chart.</p>'
    agents = agents_of(report)
    names = [agent_name(a, i) for i, a in enumerate(agents)]
    overall = report.get("overall") or {}
    mean = {
        "label": "Mean over types",
        "pass1": overall.get("mean_pass1_over_types"),
        "low": None,
        "high": None,
        "agents": [agent_overall_pass1(a) for a in agents],
    }
    labels = [r["label"] for r in rows] + [mean["label"]]
    x0 = label_width(labels)
    x1 = CHART_WIDTH - CHART_RIGHT_PAD
    bar_h, agent_h, gap = 14.0, 7.0, 3.0
    row_h = bar_h + len(agents) * (agent_h + gap) + 12
    top = CHART_TOP
    bottom = top + row_h * (len(rows) + 1) + 8

    def x_of(p: float) -> float:
        return x0 + (x1 - x0) * min(max(p, 0.0), 1.0)

    parts = pct_axis(x0, x1, top, bottom)
    for index, row in enumerate([*rows, mean]):
        is_mean = row is mean
        y = top + row_h * index + 6 + (8 if is_mean else 0)
        if is_mean:
            parts.append(svg_line(8, y - 7, x1, y - 7, "#9ca3af", 1, ' stroke-dasharray="4 3"'))
        parts.append(
            svg_text(
                x0 - 10,
                y + bar_h / 2,
                clip_label(row["label"], x0),
                anchor="end",
                extra=' font-weight="600"' if is_mean else "",
            )
        )
        parts += people_bar(row, x_of, y, bar_h, "bar-mean" if is_mean else "bar-people")
        for k, value in enumerate(row["agents"]):
            agent_y = y + bar_h + gap + k * (agent_h + gap)
            colour = AGENT_COLOURS[k % len(AGENT_COLOURS)]
            parts += agent_bar(row["label"], names[k], value, colour, x_of, agent_y, agent_h)
    legend = [(PEOPLE_COLOUR, "People (bar: Pass@1, whisker: 95% CI)")]
    legend += [(AGENT_COLOURS[k % len(AGENT_COLOURS)], name) for k, name in enumerate(names)]
    svg = svg_open(bottom + AXIS_HEIGHT, "Pass@1 per puzzle type") + "".join(parts) + "</svg>"
    return legend_html(legend) + f'<div class="chart">{svg}</div>'


# --- Chart 2: time distributions as box plots -------------------------------------------------


def quantile(sorted_values: list[float], q: float) -> float:
    """Linearly interpolated quantile of sorted values (numpy's default method)."""
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def box_stats(values, median, q1, q3) -> dict | None:
    """Box-plot numbers in ms: the report's median and quartiles (computed from the values when
    missing), whiskers at the furthest values within 1.5 IQR of the box, and the values beyond."""
    data = sorted(v for v in values or [] if is_number(v))
    if not all(is_number(v) for v in (median, q1, q3)):
        if not data:
            return None
        median, q1, q3 = (quantile(data, q) for q in (0.5, 0.25, 0.75))
    if not data:
        return {"median": median, "q1": q1, "q3": q3, "low": None, "high": None, "outliers": [], "n": None}
    reach = 1.5 * (q3 - q1)
    inside = [v for v in data if q1 - reach <= v <= q3 + reach] or [median]
    return {
        "median": median,
        "q1": q1,
        "q3": q3,
        "low": min(min(inside), q1),
        "high": max(max(inside), q3),
        "n": len(data),
        "outliers": [v for v in data if v < q1 - reach or v > q3 + reach],
    }


def time_rows(report: dict) -> list[dict]:
    """Per type: the label and the wall and active box-plot numbers (None when nothing is known)."""
    times = report.get("times") or {}
    rows = []
    for row in types_of(report):
        name = type_name(row)
        recorded = times.get(name) or {}
        boxes = {
            kind: box_stats(
                recorded.get(f"{kind}_ms"),
                row.get(f"{kind}_median_ms"),
                row.get(f"{kind}_q1_ms"),
                row.get(f"{kind}_q3_ms"),
            )
            for kind in ("wall", "active")
        }
        rows.append({"label": name, **boxes})
    return rows


def log_ticks(low_s: float, high_s: float) -> list[float]:
    """1-2-5 ticks in seconds, from the last one at or below low_s to the first at or above high_s."""
    tolerance = 1e-9
    ticks, decade = [], 10.0 ** math.floor(math.log10(low_s))
    while not ticks or ticks[-1] < high_s * (1 - tolerance):
        ticks += [step * decade for step in LOG_STEPS]
        decade *= 10
    end = next(i for i, tick in enumerate(ticks) if tick >= high_s * (1 - tolerance))
    start = max(i for i, tick in enumerate(ticks[: end + 1]) if tick <= low_s * (1 + tolerance))
    return ticks[start : end + 1]


def fmt_tick(seconds: float) -> str:
    """A tick label in seconds ("0.5 s", "20 s", "200 s")."""
    return f"{seconds:g} s"


def time_range_seconds(rows: list[dict]) -> tuple[float, float] | None:
    """Smallest and largest time drawn on the chart, in seconds, floored at MIN_SECONDS."""
    values = []
    for row in rows:
        for box in (row["wall"], row["active"]):
            if box:
                values += [v for v in (box["low"], box["q1"], box["median"], box["q3"], box["high"]) if is_number(v)]
                values += box["outliers"]
    if not values:
        return None
    return max(min(values) / 1000, MIN_SECONDS), max(max(values) / 1000, MIN_SECONDS * 2)


def time_axis(ticks: list[float], x_of, top: float, bottom: float) -> list[str]:
    """Log-scale grid: light lines at every 1..9 step, labelled lines at 1-2-5 steps (and the
    light ones labelled too when the axis spans so little that 1-2-5 gives fewer than 4 labels)."""
    parts, label_minor = [], len(ticks) < 4
    decade = 10.0 ** math.floor(math.log10(ticks[0]))
    while decade <= ticks[-1]:
        for step in range(1, 10):
            s = step * decade
            if ticks[0] <= s <= ticks[-1] and step not in LOG_STEPS:
                parts.append(svg_line(x_of(s * 1000), top, x_of(s * 1000), bottom, "#f1f5f9", 1))
                if label_minor:
                    parts.append(svg_text(x_of(s * 1000), bottom + 14, fmt_tick(s), "tick", "middle"))
        decade *= 10
    for tick in ticks:
        x = x_of(tick * 1000)
        parts += [svg_line(x, top, x, bottom, "#d1d5db", 1), svg_text(x, bottom + 14, fmt_tick(tick), "tick", "middle")]
    return parts


def box_plot(box: dict | None, label: str, kind: str, colour: str, x_of, y: float, height: float) -> list[str]:
    """One horizontal box plot: whiskers with caps, IQR box, median line, outlier dots."""
    if not box:
        return [svg_text(x_of(MIN_SECONDS * 1000) + 4, y + height / 2, DASH, "tick")]
    mid = y + height / 2
    parts = []
    if is_number(box["low"]) and is_number(box["high"]):
        lo, hi = x_of(box["low"]), x_of(box["high"])
        parts += [
            svg_line(lo, mid, x_of(box["q1"]), mid, "#475569", 1),
            svg_line(x_of(box["q3"]), mid, hi, mid, "#475569", 1),
            svg_line(lo, y + 1, lo, y + height - 1, "#475569", 1),
            svg_line(hi, y + 1, hi, y + height - 1, "#475569", 1),
        ]
    n = f", n = {box['n']}" if box.get("n") else ""
    tip = (
        f"{label}, {kind} time: median {fmt_seconds(box['median'])} s, IQR "
        f"{fmt_seconds(box['q1'])}–{fmt_seconds(box['q3'])} s{n}"
    )
    parts.append(
        svg_rect(
            x_of(box["q1"]),
            y,
            x_of(box["q3"]) - x_of(box["q1"]),
            height,
            colour,
            f"box-{kind}",
            tip,
            ' stroke="#334155" stroke-width="1"',
        )
    )
    med = x_of(box["median"])
    parts.append(svg_line(med, y, med, y + height, INK, 2))
    parts += [
        f'<circle cx="{num(x_of(v))}" cy="{num(mid)}" r="2.2" fill="none" stroke="#475569"/>' for v in box["outliers"]
    ]
    return parts


def time_chart(report: dict) -> str:
    """Chart 2: wall and active time per type as box plots on a log axis in seconds."""
    rows = [row for row in time_rows(report) if row["wall"] or row["active"]]
    span = time_range_seconds(rows)
    if not rows or span is None:
        return f'<p class="empty">No times recorded {DASH} nothing to chart.</p>'
    ticks = log_ticks(*span)
    x0 = label_width([r["label"] for r in rows])
    x1 = CHART_WIDTH - 36  # room for half of the last tick label
    low_log, high_log = math.log10(ticks[0]), math.log10(ticks[-1])

    def x_of(ms: float) -> float:
        seconds = max(ms / 1000, MIN_SECONDS)
        return x0 + (x1 - x0) * (math.log10(seconds) - low_log) / (high_log - low_log or 1)

    box_h, row_h, top = 9.0, 32.0, CHART_TOP
    bottom = top + row_h * len(rows)
    parts = [
        f'<rect x="{num(x0)}" y="{num(top + row_h * i)}" width="{num(x1 - x0)}" height="{num(row_h)}" fill="#f8fafc"/>'
        for i in range(1, len(rows), 2)
    ]
    parts += time_axis(ticks, x_of, top, bottom)
    parts.append(svg_text((x0 + x1) / 2, bottom + 36, "Time per attempt (seconds, log scale)", "axis-title", "middle"))
    for index, row in enumerate(rows):
        y = top + row_h * index
        parts.append(svg_text(x0 - 10, y + row_h / 2, clip_label(row["label"], x0), anchor="end"))
        parts += box_plot(row["wall"], row["label"], "wall", WALL_COLOUR, x_of, y + 5, box_h)
        parts += box_plot(row["active"], row["label"], "active", ACTIVE_COLOUR, x_of, y + row_h - 5 - box_h, box_h)
    legend = legend_html([(WALL_COLOUR, "Wall time"), (ACTIVE_COLOUR, "Active time (page visible)")])
    svg = svg_open(bottom + AXIS_HEIGHT, "Time per attempt per puzzle type") + "".join(parts) + "</svg>"
    return legend + f'<div class="chart">{svg}</div>'


# --- HTML page --------------------------------------------------------------------------------


def html_table(headers, rows, mean_last: bool = False, header_colours: dict | None = None) -> str:
    """An escaped HTML table; the last row styled as a summary when mean_last."""
    header_colours = header_colours or {}
    head = "".join(
        f"<th>{swatch(header_colours[i]) if i in header_colours else ''}{escape(str(h))}</th>"
        for i, h in enumerate(headers)
    )
    body = []
    for index, row in enumerate(rows):
        cls = ' class="mean"' if mean_last and index == len(rows) - 1 else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def swatch(colour: str) -> str:
    """A small coloured square, as in the chart legends."""
    return f'<span class="swatch" style="background:{colour}"></span>'


def fact_cards(report: dict) -> str:
    """The header's grid of key numbers."""
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
    return (
        '<div class="facts">'
        + "".join(f'<div class="fact"><b>{escape(value)}</b><span>{escape(text)}</span></div>' for value, text in cards)
        + "</div>"
    )


def html_header(report: dict) -> str:
    """Title, study facts and the key numbers."""
    return (
        f'<header><p class="kicker">CaptchaArena · human baseline report</p>'
        f"<h1>{escape(study_title(report))}</h1>"
        f'<p class="meta">{escape(study_line(report) or DASH)}</p>{fact_cards(report)}</header>'
    )


def html_types_section(report: dict) -> str:
    """The per-type table with the means below it."""
    types = types_of(report)
    if types:
        table = html_table(
            TYPE_TABLE_HEADERS, [type_row_cells(row) for row in types] + [overall_row_cells(report)], mean_last=True
        )
    else:
        table = '<p class="empty">No puzzle types with attempts.</p>'
    lines = "".join(f"<li>{escape(line)}</li>" for line in overall_lines(report))
    return (
        f"<section><h2>Per puzzle type</h2>{table}"
        f'<p class="note">{escape(PASS1_NOTE)} {escape(TIME_NOTE)}</p>'
        f'<ul class="plain">{lines}</ul></section>'
    )


def html_chart_sections(report: dict) -> str:
    """Chart 1 (Pass@1) and chart 2 (times), each in its own section."""
    return (
        f"<section><h2>Pass@1 per puzzle type: people and agents</h2>"
        f'<p class="note">Bars from 0 to 100% of attempts solved; people with their 95% Wilson '
        f"interval, each agent as a thinner bar beneath.</p>{pass1_chart(report)}</section>"
        f"<section><h2>Time per attempt</h2>"
        f'<p class="note">{escape(BOX_NOTE)} {escape(TIME_DEFINITION)}</p>'
        f"{time_chart(report)}</section>"
    )


def html_agreement_section(report: dict) -> str:
    """Agreement between people on the same puzzles."""
    lines = "".join(f"<li>{escape(line)}</li>" for line in agreement_lines(report))
    return (
        f"<section><h2>Agreement between people</h2>"
        f'<p class="note">Whether people who saw the same puzzle were both right or both wrong, '
        f'beyond chance.</p><ul class="plain">{lines}</ul></section>'
    )


def html_agents_section(report: dict) -> str:
    """People against each agent per type, and each agent's Pass@k."""
    agents = agents_of(report)
    if not agents:
        return '<section><h2>Agents on the same puzzles</h2><p class="empty">No agents on these puzzles.</p></section>'
    headers, rows = agents_table(report)
    colours = {1: PEOPLE_COLOUR}
    colours.update({i + 2: AGENT_COLOURS[i % len(AGENT_COLOURS)] for i in range(len(agents))})
    items = "".join(
        f"<li>{swatch(AGENT_COLOURS[i % len(AGENT_COLOURS)])}<b>{escape(agent_name(a, i))}</b> "
        f"({escape(agent_details(a))}): {escape(agent_pass_at_text(a))}</li>"
        for i, a in enumerate(agents)
    )
    return (
        f"<section><h2>Agents on the same puzzles</h2>"
        f'<p class="note">Pass@1 per type; pass@k (mean over puzzles) where there were k or more '
        f"tries per puzzle.</p>{html_table(headers, rows, mean_last=True, header_colours=colours)}"
        f'<ul class="plain">{items}</ul></section>'
    )


def to_html(report: dict) -> str:
    """The report as one self-contained HTML page: inline CSS and SVG, no scripts, no external URLs."""
    title = f"Human baseline: {study_title(report)}"
    css = PAGE_CSS + ".legend{display:flex;flex-wrap:wrap;gap:6px 18px;font-size:13px;margin:4px 0 8px}"
    generated = report.get("generated_at") or DASH
    body = "".join(
        [
            html_header(report),
            html_types_section(report),
            html_chart_sections(report),
            html_agreement_section(report),
            html_agents_section(report),
        ]
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{css}</style></head>"
        f"<body><main>{body}<footer>Generated {escape(str(generated))}</footer></main></body></html>\n"
    )


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
