"""How a report is worded: its numbers ("87.5% [73.9, 94.6]", "5.2 (3.9–7.1)"), names, colours,
and the sentences every format shares. It reads the report's fields as report_types.py declares
them; any number may be None and any list empty: gaps show as "–". Pure: no Django, no database."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypeGuard

from annotation.reporting.report_types import (
    AgentSummary,
    AgentTypeRow,
    DroppedType,
    HalfFigures,
    MotionRow,
    Overall,
    PositionRow,
    StudyReport,
    TrainingClient,
    TypeRow,
    UnpairedType,
    Versus,
    VersusRow,
)
from annotation.reporting.stats import (
    BY_BOOTSTRAP,
    FEW_PEOPLE,
    MIN_PEOPLE_FOR_BOOTSTRAP,
    NO_SPREAD,
    PAIRED_FEW_PEOPLE,
    PAIRED_NO_SPREAD,
)

DASH = "–"
# The per-type CSV: one row per type, no summary rows (those are the summary CSV's, SUMMARY_COLUMNS).
CSV_TYPE_COLUMNS = (
    "type",
    "attempts",
    "puzzles",
    "annotators",
    "correct",
    "wrong",
    "timed_out",
    "not_submitted",
    "pass1",
    "ci_low",
    "ci_high",
    "ci_method",
    "ci_people",
    "wilson_low",
    "wilson_high",
    "k",
    "correct_within_k",
    "pass_k",
    "pass_k_ci_low",
    "pass_k_ci_high",
    "pass_k_ci_method",
    "submission_rate",
    "wall_median_ms",
    "wall_q1_ms",
    "wall_q3_ms",
    "active_median_ms",
    "active_q1_ms",
    "active_q3_ms",
    "mean_actions",
    "no_input",
)
# The per-type CSV's column after CSV_TYPE_COLUMNS: why a type has no Pass@1 of people (dropped_type_reason).
DROPPED_CSV_COLUMN = "no_pass1_reason"
# The per-type CSV's columns by position, after CSV_TYPE_COLUMNS: each half's figures, then the change.
HALVES = ("first", "second")
HALF_FIGURES = ("answers", "correct", "pass1", "wall_median_ms", "active_median_ms")
POSITION_CSV_COLUMNS = (
    *(f"{half}_half_{figure}" for half in HALVES for figure in HALF_FIGURES),
    "position_change",
)
SUMMARY_COLUMNS = ("section", "measure", "value", "ci_low", "ci_high", "n", "method")
# Decimals a CSV keeps: proportions and agreement 4, milliseconds none, means of counts 2; counts
# are integers. A column not named here: 4.
CSV_DIGITS = {"mean_actions": 2, "ci_people": 2} | {
    c: 0 for c in CSV_TYPE_COLUMNS + POSITION_CSV_COLUMNS if c.endswith("_ms")
}
PROPORTION_DIGITS = 4


def type_table_headers(k: int = 1) -> list[str]:
    """The per-type table's headers; a Pass@k column after Pass@1 when k > 1."""
    pass_k = [f"Pass@{fmt_count(k)} [95% CI]"] if is_number(k) and k > 1 else []
    return [
        "Type",
        "Pass@1 [95% CI]",
        *pass_k,
        "95% CI method",
        "Correct",
        "Wrong",
        "Timed out",
        "Answers / puzzles / people",
        "Submitted",
        "Wall time, s: median (IQR)",
        "Active time, s: median (IQR)",
        "Mean actions",
    ]


PASS1_NOTE = (
    "Pass@1: share of answers solved, an answer being a person's first attempt on a puzzle; with k "
    "attempts allowed, Pass@k: share solved within the first k."
)
OUTCOME_NOTE = (
    "Wrong and timed out are both not solved, counted apart: a time-out is an answer the study's time "
    "limit cut off (the page submitted what was there, or the submit came after the limit). Submitted: "
    "answers submitted of those started."
)
AGREEMENT_NOTE = (
    "Whether people who saw the same puzzle were both right or both wrong. Percent agreement is the "
    "share of such pairs that agree; kappa and alpha correct it for chance and fall to zero or below "
    "when nearly everyone is right, however often people agree (the kappa paradox); Gwet's AC1 corrects "
    "for chance without that collapse."
)
TIME_DEFINITION = (
    "Wall time runs from the first event of an attempt to its submit, by the page's clock, and is never "
    "longer than the server saw from serving the puzzle to receiving the submit (the server's own "
    "measure when the page's clock does not fit); active time leaves out the time the page was hidden "
    "or silent."
)
TIME_NOTE = TIME_DEFINITION + " Times in seconds: median with the interquartile range (Q1–Q3)."

# Colours, shared by the tables, the legend and the charts.
PEOPLE_COLOUR = "#2563eb"
AGENT_COLOURS = ("#f59e0b", "#059669", "#dc2626", "#7c3aed", "#db2777", "#0891b2", "#65a30d", "#475569")


# --- small formatters -------------------------------------------------------------------------


def is_number(value: object) -> TypeGuard[float]:
    """True for a finite int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def fmt_pct(value: float | None, digits: int = 1, sign: bool = True) -> str:
    """A proportion as a percent ("87.5%"); "–" when missing."""
    if not is_number(value):
        return DASH
    return f"{value * 100:.{digits}f}" + ("%" if sign else "")


def fmt_interval(low: float | None, high: float | None) -> str:
    """A 95% interval of proportions as percents in brackets ("[73.9, 94.6]"); "" when missing."""
    if not (is_number(low) and is_number(high)):
        return ""
    return f"[{fmt_pct(low, sign=False)}, {fmt_pct(high, sign=False)}]"


def fmt_pass1(value: float | None, low: float | None = None, high: float | None = None) -> str:
    """Pass@1 with its interval when known ("87.5% [73.9, 94.6]"); "–" when missing."""
    if not is_number(value):
        return DASH
    interval = fmt_interval(low, high)
    return f"{fmt_pct(value)} {interval}" if interval else fmt_pct(value)


def fmt_number(value: float | None, digits: int = 1) -> str:
    """A number with fixed decimals; "–" when missing."""
    return f"{value:.{digits}f}" if is_number(value) else DASH


def fmt_count(value: float | None) -> str:
    """A count as an integer; "–" when missing."""
    return str(int(value)) if is_number(value) else DASH


def fmt_seconds(ms: float | None) -> str:
    """Milliseconds as seconds with one decimal ("5.2"); "–" when missing."""
    return fmt_number(ms / 1000) if is_number(ms) else DASH


def fmt_time(median_ms: float | None, q1_ms: float | None, q3_ms: float | None) -> str:
    """A median time with its IQR in seconds ("5.2 (3.9–7.1)"); "–" when missing."""
    if not is_number(median_ms):
        return DASH
    if is_number(q1_ms) and is_number(q3_ms):
        return f"{fmt_seconds(median_ms)} ({fmt_seconds(q1_ms)}–{fmt_seconds(q3_ms)})"
    return fmt_seconds(median_ms)


def plural(count: float | None, noun: str) -> str:
    """A count with its noun, plural unless the count is 1 ("1 attempt", "3 attempts")."""
    return f"{fmt_count(count)} {noun}{'' if count == 1 else 's'}"


def fmt_agreement(value: float | None) -> str:
    """A kappa or alpha with two decimals and a real minus sign; "–" when missing."""
    return fmt_number(value, 2).replace("-", "−")


def pass_k_items(pass_k: Mapping[str, float | None]) -> list[tuple[int, float]]:
    """(k, value) pairs from a {"5": 0.6} mapping, by k, dropping k = 1 and missing values."""
    items = []
    for key, value in pass_k.items():
        try:
            k = int(key)
        except (TypeError, ValueError):
            continue
        if k > 1 and is_number(value):
            items.append((k, value))
    return sorted(items)


def fmt_pass_cell(pass1: float | None, pass_k: Mapping[str, float | None]) -> str:
    """Pass@1 and any Pass@k of one type, for the agents table ("35.0% · pass@5 60.0%")."""
    extras = [f"pass@{k} {fmt_pct(v)}" for k, v in pass_k_items(pass_k)]
    return " · ".join([fmt_pct(pass1), *extras])


def interval_note(report: StudyReport) -> str:
    """How the report's intervals were made, from its `intervals` (the counting rules say the same)."""
    method = report["intervals"]
    if method["method"] != "cluster bootstrap over annotators":
        return "95% intervals in brackets."
    least = fmt_count(method["min_people_for_bootstrap"])
    exact = (
        "Clopper-Pearson's exact interval taking each person as one observation, over the effective number of "
        "people (n in the method), so that it is wide when people are few and never of zero width."
    )
    if method["annotators"] < method["min_people_for_bootstrap"]:
        return (
            f"95% intervals in brackets are clustered by annotator, each with its method beside it. With "
            f"{plural(method['annotators'], 'annotator')}, fewer than the {least} a cluster bootstrap needs "
            f"(few participants), every interval is {exact}"
        )
    annotators = plural(method["annotators"], "annotator")
    if method["exact"]:
        how = f"every one of the {fmt_count(method['resamples'])} distinct resamples of {annotators}, exact"
    else:
        how = f"{fmt_count(method['resamples'])} resamples of {annotators}, seed {method['seed']}"
    return (
        "95% intervals in brackets are clustered by annotator, each with its method beside it. Where "
        f"{least} people or more answered: percentile intervals of a cluster bootstrap over annotators ({how}), "
        "each resample keeping all of a drawn person's answers, so that one person's many answers do not "
        f"count as independent. Where fewer than {least} answered (few participants), or every resample "
        f"gives the same share (no spread): {exact}"
    )


def fmt_people(value: float | None) -> str:
    """An effective number of people: whole when it is, else with one decimal ("3", "4.6")."""
    if not is_number(value):
        return DASH
    return fmt_count(value) if abs(value - round(value)) < 0.05 else fmt_number(value)


def fmt_ci_method(method: str, people: float | None) -> str:
    """An interval's method in a few words, with the people behind it ("exact, n = 3: few
    participants"); "–" without an interval."""
    if method == BY_BOOTSTRAP:
        return f"bootstrap, {fmt_people(people)} people"
    if method in (FEW_PEOPLE, PAIRED_FEW_PEOPLE):
        return f"exact, n = {fmt_people(people)}: few participants"
    if method in (NO_SPREAD, PAIRED_NO_SPREAD):
        return f"exact, n = {fmt_people(people)}: no spread"
    return DASH


def row_ci_method(row: TypeRow, k: int) -> str:
    """A type's interval method; Pass@k's too when it differs from Pass@1's."""
    text = fmt_ci_method(row["ci_method"], row["ci_people"])
    if k > 1 and row["pass_k_ci_method"] and row["pass_k_ci_method"] != row["ci_method"]:
        text += f"; Pass@{k}: {fmt_ci_method(row['pass_k_ci_method'], row['ci_people'])}"
    return text


# --- reading the report -----------------------------------------------------------------------


def type_name(row: TypeRow | AgentTypeRow) -> str:
    """A per-type row's type name, "–" when it has none."""
    return row["type"] or DASH


def agent_name(agent: AgentSummary, index: int) -> str:
    """An agent's name, or "agent N" when it has none."""
    return agent["name"] or f"agent {index + 1}"


def agent_colour(index: int) -> str:
    """The colour of the index-th agent, the same in the tables, the legends and the charts."""
    return AGENT_COLOURS[index % len(AGENT_COLOURS)]


def agent_types(agent: AgentSummary) -> dict[str, AgentTypeRow]:
    """An agent's per-type rows by type name."""
    return {type_name(row): row for row in agent["types"]}


def agent_overall_pass1(agent: AgentSummary) -> float | None:
    """An agent's mean Pass@1 over types, else its overall pass@1 (None without puzzles)."""
    value = agent["mean_pass1_over_types"]
    if is_number(value):
        return value
    return agent["pass_at"].get("1")  # pass_at is {} when the run has no complete puzzle


def all_type_names(report: StudyReport) -> list[str]:
    """People's types in report order, then any type only an agent has, by name."""
    names = [type_name(row) for row in report["types"]]
    extra = {t for agent in report["agents"] for t in agent_types(agent)} - set(names)
    return names + sorted(extra)


def study_title(report: StudyReport) -> str:
    """The study's name, or "Study N" when it has none."""
    study = report["study"]
    return study["name"] or f"Study {study['id']}"


def annotators_line(report: StudyReport) -> str:
    """How many people are counted and how many were left out."""
    return f"{fmt_count(report['annotators'])} annotators ({fmt_count(report['excluded_annotators'])} excluded)"


def study_line(report: StudyReport) -> str:
    """Study id, split, overlap, attempts per puzzle and the generation time, on one line."""
    study = report["study"]
    limit = study["time_limit_s"]
    parts = [
        f"Study #{study['id']}",
        f"split {study['split']}" if study["split"] else None,
        f"overlap {study['overlap']}",
        plural(study["attempts_per_puzzle"], "attempt") + " per puzzle per person",
        f"time limit {fmt_count(limit)} s per puzzle" if is_number(limit) else None,
        f"generated {report['generated_at']}" if report["generated_at"] else None,
    ]
    return " · ".join(p for p in parts if p)


def study_k(report: StudyReport) -> int:
    """The attempts each person had per puzzle (the k of human Pass@k), at least 1."""
    return max(1, report["study"]["attempts_per_puzzle"])


# --- tables shared by Markdown and HTML (plain text; escaped by the renderer) -------------------


def type_row_cells(row: TypeRow, k: int = 1) -> list[str]:
    """One puzzle type as table cells, in type_table_headers(k) order."""
    submitted = fmt_pct(row["submission_rate"])
    if submitted != DASH:
        submitted += f" ({fmt_count(row['submitted'])}/{fmt_count(row['started'])})"
    pass_k = [fmt_pass1(row["pass_k"], row["pass_k_ci_low"], row["pass_k_ci_high"])] if k > 1 else []
    return [
        type_name(row),
        fmt_pass1(row["pass1"], row["ci_low"], row["ci_high"]),
        *pass_k,
        row_ci_method(row, k),
        fmt_count(row["correct"]),
        fmt_count(row["wrong"]),
        fmt_count(row["timed_out"]),
        f"{fmt_count(row['attempts'])} / {fmt_count(row['puzzles'])} / {fmt_count(row['annotators'])}",
        submitted,
        fmt_time(row["wall_median_ms"], row["wall_q1_ms"], row["wall_q3_ms"]),
        fmt_time(row["active_median_ms"], row["active_q1_ms"], row["active_q3_ms"]),
        fmt_number(row["mean_actions"]),
    ]


def fmt_mean_pass1(overall: Overall) -> str:
    """People's mean Pass@1 over types with its interval; "–" when missing."""
    return fmt_pass1(overall["mean_pass1_over_types"], overall["mean_ci_low"], overall["mean_ci_high"])


def fmt_mean_pass_k(overall: Overall) -> str:
    """People's mean Pass@k over types with its interval; "–" when missing."""
    return fmt_pass1(overall["mean_pass_k_over_types"], overall["mean_pass_k_ci_low"], overall["mean_pass_k_ci_high"])


def overall_row_cells(report: StudyReport, k: int = 1) -> list[str]:
    """The closing row of the type table: the means over types with their intervals, and the
    counts over every type."""
    overall = report["overall"]
    means = [fmt_mean_pass1(overall), *([fmt_mean_pass_k(overall)] if k > 1 else [])]
    counts = (overall["attempts"], overall["puzzles"], report["annotators"])
    cells = [
        "All types",
        *(f"mean {mean}" if mean != DASH else DASH for mean in means),
        fmt_ci_method(overall["mean_ci_method"], overall["ci_people"]),
        fmt_count(overall["correct"]),
        fmt_count(overall["wrong"]),
        fmt_count(overall["timed_out"]),
        " / ".join(fmt_count(c) for c in counts),
    ]
    return cells + [DASH] * (len(type_table_headers(k)) - len(cells))


def overall_lines(report: StudyReport) -> list[str]:
    """The means over types and the pooled figures (Pass@1, and Pass@k with k > 1), the outcomes
    and the answers left out, as sentences."""
    overall = report["overall"]
    k = study_k(report)
    people = overall["ci_people"]
    lines = [
        f"Mean Pass@1 over types: {fmt_mean_pass1(overall)} (each type weighs the same; "
        f"{fmt_ci_method(overall['mean_ci_method'], people)}).",
        f"Pooled Pass@1: {fmt_pass1(overall['pass1_pooled'], overall['ci_low'], overall['ci_high'])}"
        f" — {fmt_count(overall['correct'])} of {fmt_count(overall['attempts'])} answers "
        f"on {fmt_count(overall['puzzles'])} puzzles ({fmt_ci_method(overall['ci_method'], people)}).",
    ]
    if k > 1:
        pooled_k = fmt_pass1(overall["pass_k_pooled"], overall["pass_k_ci_low"], overall["pass_k_ci_high"])
        lines += [
            f"Mean Pass@{k} over types: {fmt_mean_pass_k(overall)} ({k} attempts allowed per puzzle; each type "
            "weighs the same).",
            f"Pooled Pass@{k}: {pooled_k}.",
        ]
    lines += [outcomes_line(report), no_input_line(report)]
    return lines


def outcomes_line(report: StudyReport) -> str:
    """What became of the answers: correct, wrong, timed out, and started but not submitted."""
    overall = report["overall"]
    timed_out = f"{fmt_count(overall['timed_out'])} timed out"
    if not is_number(report["study"]["time_limit_s"]):
        timed_out += " (no time limit)"
    return (
        f"Outcomes of {plural(overall['started'], 'answer')} started: "
        f"{fmt_count(overall['correct'])} correct, {fmt_count(overall['wrong'])} wrong, {timed_out}, "
        f"{fmt_count(overall['not_submitted'])} not submitted."
    )


def no_input_line(report: StudyReport) -> str:
    """The answers left out for want of input evidence, overall and per type that has any."""
    by_type = [f"{type_name(row)} {fmt_count(row['no_input'])}" for row in report["types"] if row["no_input"]]
    line = (
        f"Excluded: {fmt_count(report['overall']['no_input'])} without input evidence (actions with no pointer or "
        f"key input behind them){': ' + ', '.join(by_type) if by_type else ''}. The check catches pages "
        "that send actions without input events; a program that sends the events too (a pointerdown and a "
        "pointerup at each action's place) passes it, so it is not proof of a person."
    )
    beside = report["no_input_beside_pool"]
    if any(n > 0 for n in beside.values()):
        counts = ", ".join(f"{purpose} {fmt_count(n)}" for purpose, n in beside.items())
        line += f" Also without input evidence beside the scored puzzles: {counts} (never in Pass@1)."
    return line


def dropped_type_reason(dropped: DroppedType) -> str:
    """Why a type has no Pass@1 of people ("no included person answered it: the only person who did
    was excluded (failed gold)")."""
    parts = []
    excluded = dropped["excluded_people"]
    if excluded:
        who = "the only person who answered it was"
        if excluded > 1:
            who = f"the {fmt_count(excluded)} people who answered it were"
        reasons = "; ".join(dropped["excluded_reasons"]) or "no reason given"
        parts.append(f"{who} excluded ({reasons})")
    if dropped["no_input"]:
        parts.append(f"{plural(dropped['no_input'], 'answer')} without input evidence, left out")
    if dropped["not_submitted"]:
        parts.append(f"{plural(dropped['not_submitted'], 'answer')} started and never submitted")
    if not parts:
        return "nobody has answered it yet"
    only_excluded = excluded and len(parts) == 1
    return ("no included person answered it: " if only_excluded else "no counted answer: ") + "; ".join(parts)


def dropped_types_line(report: StudyReport) -> str:
    """The types of the report's puzzles that have no Pass@1 of people, each with why; "" when none."""
    dropped = report["dropped_types"]
    if not dropped:
        return ""
    each = "; ".join(
        f"{row['type']} ({plural(row['puzzles'], 'puzzle')}): {dropped_type_reason(row)}" for row in dropped
    )
    return f"Types without people's Pass@1, left out of every mean over types: {each}."


def dropped_reasons(report: StudyReport) -> dict[str, str]:
    """Each dropped type's reason by its name."""
    return {row["type"]: dropped_type_reason(row) for row in report["dropped_types"]}


def public_truth_line(count: int | None) -> str | None:
    """The warning carried by a study on puzzles whose answers are published; None when there are none."""
    if not is_number(count) or count <= 0:
        return None
    return (
        f"Public truth on {plural(count, 'puzzle')}: their answers are published (an imported public "
        "dataset), so anyone, a bot included, can look them up; results on them show no ability to solve them."
    )


def public_truth_lines(report: StudyReport) -> list[str]:
    """The report's public-truth warning as a list of at most one sentence."""
    line = public_truth_line(report["public_truth_puzzles"])
    return [line] if line else []


def agreement_lines(report: StudyReport) -> list[str]:
    """Percent agreement, Gwet's AC1, Fleiss' kappa and Krippendorff's alpha with their n, or why
    there are none."""
    agreement = report["agreement"]
    if not agreement:
        overlap = report["study"]["overlap"]
        if overlap <= 1:
            return ["n/a (overlap 1)"]
        return [f"n/a (overlap {overlap}, but no puzzle was rated by two people)"]
    n = agreement["agreement_n"]
    return [
        f"Percent agreement = {fmt_pct(agreement['percent_agreement'])} (n = {fmt_count(n)} puzzles)",
        f"Gwet's AC1 = {fmt_agreement(agreement['gwet_ac1'])} (n = {fmt_count(n)} puzzles)",
        f"Fleiss' κ = {fmt_agreement(agreement['fleiss_kappa'])} (n = {fmt_count(agreement['fleiss_n'])} puzzles)",
        f"Krippendorff's α = {fmt_agreement(agreement['krippendorff_alpha'])} "
        f"(n = {fmt_count(agreement['alpha_n'])} puzzles)",
    ]


def people_pass_k(value: float | None, k: int) -> dict[str, float]:
    """People's Pass@k of a type or of the means, in the agents' {"k": value} form; {} when k is 1."""
    return {str(k): float(value)} if k > 1 and is_number(value) else {}


def agents_table(report: StudyReport) -> tuple[list[str], list[list[str]]]:
    """People against each agent per type (Pass@1, then any Pass@k), closing with the means."""
    agents = report["agents"]
    k = study_k(report)
    people = {type_name(row): row for row in report["types"]}
    per_agent = [agent_types(agent) for agent in agents]
    headers = ["Type", "People", *(agent_name(a, i) for i, a in enumerate(agents))]
    rows = []
    for name in all_type_names(report):
        person = people.get(name)  # a type only agents have
        cells = [name, fmt_pass_cell(*_people_pass(person, k))]
        for rows_by_type in per_agent:
            row = rows_by_type.get(name)  # a type this agent has no complete puzzle of
            cells.append(fmt_pass_cell(row["pass1"], row["pass_k"]) if row else fmt_pass_cell(None, {}))
        rows.append(cells)
    return headers, rows + agents_mean_rows(report)


def agents_mean_rows(report: StudyReport) -> list[list[str]]:
    """The agents table's closing rows: each run's mean Pass@1 beside people's over the same
    types, those both have; one row per distinct set of them ("Mean over types" when both have
    every type of the table), so that no mean sits beside one over other types."""
    agents = report["agents"]
    k = study_k(report)
    groups: dict[tuple[str, ...], list[int]] = {}
    for index, agent in enumerate(agents):
        groups.setdefault(tuple(sorted(agent["shared_types"])), []).append(index)
    everything = set(all_type_names(report))
    rows = []
    for shared, members in groups.items():
        if set(shared) == everything:
            overall = report["overall"]
            label = "Mean over types"
            pass_k = people_pass_k(overall["mean_pass_k_over_types"], k)
            people = fmt_pass_cell(overall["mean_pass1_over_types"], pass_k)
        else:
            label = f"Mean over the {plural(len(shared), 'type')} both have" if shared else "No type both have"
            people = fmt_pct(agents[members[0]]["people_mean_pass1_shared"])
        cells = [fmt_pct(agent["mean_pass1_shared"]) if i in members else DASH for i, agent in enumerate(agents)]
        rows.append([label, people, *cells])
    return rows


def agents_mean_note(report: StudyReport) -> str:
    """For each run whose types are not people's, what its mean over its own types is and which
    types the means beside people leave out; "" when every run has people's types."""
    people = {row["type"] for row in report["types"] if is_number(row["pass1"])}
    notes = []
    for index, agent in enumerate(report["agents"]):
        own = {row["type"] for row in agent["types"]}
        if own == people:
            continue
        parts = [
            f"{agent_name(agent, index)}: its mean over its own {plural(len(own), 'type')} is "
            f"{fmt_pct(agent['mean_pass1_over_types'])}"
        ]
        if own - people:
            parts.append(f"people have no Pass@1 on {', '.join(sorted(own - people))}")
        if people - own:
            parts.append(f"it has no complete puzzle of {', '.join(sorted(people - own))}")
        notes.append("; ".join(parts))
    if not notes:
        return ""
    return "Means beside people are over the types both have. " + ". ".join(notes) + "."


def _people_pass(row: TypeRow | None, k: int) -> tuple[float | None, dict[str, float]]:
    """People's Pass@1 and Pass@k of a type, nothing when they have no row for it."""
    return (row["pass1"], people_pass_k(row["pass_k"], k)) if row else (None, {})


def agent_details(agent: AgentSummary) -> str:
    """Where an agent's numbers come from: run, source, model, protocol, the k rollouts per puzzle
    taken, and what was left out (failed rollouts per type, puzzles short of k)."""
    parts = [
        f"run {agent['run']}",
        f"source {agent['source']}" if agent["source"] else None,
        f"model {agent['model']}" if agent["model"] else None,
        f"protocol {agent['protocol']}" if agent["protocol"] else None,
        f"{fmt_count(agent['rollouts_per_puzzle'])} rollouts per puzzle",
        _left_out(agent),
        f"{plural(agent['trained_on'], 'puzzle')} of them trained on" if agent["trained_on"] else None,
    ]
    return ", ".join(p for p in parts if p) or DASH


def _left_out(agent: AgentSummary) -> str | None:
    """ "3 failed rollouts left out (Bingo 2, Dice_Count 1)", with any puzzles short of k; None if nothing was."""
    failed = agent["failed_by_type"]
    short = agent["short_puzzles"]
    parts = []
    if failed:
        by_type = ", ".join(f"{name} {fmt_count(n)}" for name, n in failed.items())
        parts.append(f"{plural(sum(failed.values()), 'failed rollout')} left out ({by_type})")
    if short:
        parts.append(f"{plural(short, 'puzzle')} with fewer than k rollouts left out")
    return "; ".join(parts) or None


def agent_pass_at_text(agent: AgentSummary) -> str:
    """An agent's overall Pass@k values ("Pass@1 35.0% · Pass@5 60.0%")."""
    items = sorted((int(key), value) for key, value in agent["pass_at"].items())
    if not items:
        return f"Pass@1 {fmt_pct(agent_overall_pass1(agent))}"
    return " · ".join(f"Pass@{k} {fmt_pct(v)}" for k, v in items)


# --- pointer motion ---------------------------------------------------------------------------
MOTION_NOTE = (
    "Per type, medians over attempts of the pointer's path on the 1280x1080 page: its length, its "
    "straightness towards each press (1.0 is a ruler-straight line), the peak speed over 16 ms and the "
    "pause before the first action; then the mean human-likeness score and the share of attempts scoring "
    "0.75 or more. People: their answers as counted above (first attempts); agents: each run's rollouts "
    "that reached the page. With a path: attempts with pointer samples, of those measured when scored."
)
MOTION_HEADERS = [
    "Type",
    "Who",
    "With a path",
    "Path, px",
    "Straightness",
    "Peak speed, px/s",
    "Pause before first action, ms",
    "Human-likeness",
    "Share ≥ 0.75",
]


def motion_who(group: str) -> str:
    """'People', or the agent run's name."""
    return "People" if group == "people" else group.removeprefix("agent: ")


def motion_row_cells(row: MotionRow) -> list[str]:
    """A row of the motion table (MOTION_HEADERS)."""
    return [
        "All types" if row["type"] == "all types" else row["type"] or DASH,
        motion_who(row["group"]),
        f"{fmt_count(row['with_path'])} of {fmt_count(row['attempts'])}",
        fmt_number(row["path_px"], 0),
        fmt_number(row["straightness"], 3),
        fmt_number(row["peak_speed"], 0),
        fmt_number(row["pause_ms"], 0),
        fmt_number(row["human_likeness"], 2),
        fmt_pct(row["humanlike_share"]),
    ]


def motion_table_rows(report: StudyReport) -> list[list[str]]:
    """Each type's rows, then the rows over all types; [] without any attempt."""
    motion = report["motion"]
    return [motion_row_cells(row) for row in motion["rows"] + motion["overall"]]


def motion_rule_line(report: StudyReport) -> str:
    """The human-likeness rule and what the score cannot tell."""
    rule = report["motion"]["rule"]
    return (
        f"Human-likeness: {rule}. It describes how the pointer moved; it proves nothing about who moved it."
        if rule
        else ""
    )


# --- by position: learning and fatigue --------------------------------------------------------
POSITION_HEADERS = [
    "Type",
    "Pass@1, first half",
    "Pass@1, second half",
    "Change",
    "Active time, s: first half",
    "Active time, s: second half",
]


def position_note(report: StudyReport) -> str:
    """What the halves are, and what a change between them can show."""
    section = report["by_position"]
    length = section["run_length"]
    note = (
        f"Each person's run has {plural(length, 'place')} (scored puzzles and gold); the first half is places 1 "
        f"to {fmt_count(length // 2)}, the second the rest. Each person gets their own balanced order, so every "
        "type comes early for some and late for others: a rise from the first half to the second suggests "
        "learning, a fall fatigue. Pass@1 with correct of submitted answers; median active time."
    )
    if section["unplaced"]:
        note += f" {plural(section['unplaced'], 'answer')} stored without a place, in neither half."
    return note


def fmt_half_pass1(half: HalfFigures) -> str:
    """A half's Pass@1 with its counts ("87.5% (35 of 40)"); "–" without answers."""
    if not is_number(half["pass1"]):
        return DASH
    return f"{fmt_pct(half['pass1'])} ({fmt_count(half['correct'])} of {fmt_count(half['answers'])})"


def fmt_change(change: float | None) -> str:
    """A change of Pass@1 in percentage points, signed ("+4.2 pts", "−3.0 pts"); "–" when missing."""
    return f"{fmt_points(change)} pts" if is_number(change) else DASH


def position_row_cells(row: PositionRow) -> list[str]:
    """A row of the position table (POSITION_HEADERS)."""
    return [
        "All types" if row["type"] == "all types" else row["type"] or DASH,
        fmt_half_pass1(row["first"]),
        fmt_half_pass1(row["second"]),
        fmt_change(row["change"]),
        fmt_seconds(row["first"]["active_median_ms"]),
        fmt_seconds(row["second"]["active_median_ms"]),
    ]


def position_table_rows(report: StudyReport) -> list[list[str]]:
    """Each type's row, then the pooled row over all types; [] without a placed answer."""
    section = report["by_position"]
    if not section["rows"]:
        return []
    return [position_row_cells(row) for row in [*section["rows"], section["overall"]]]


def position_csv_values(row: PositionRow | None) -> dict[str, float | int | None]:
    """A type's figures by position under POSITION_CSV_COLUMNS (all None for a type with no placed answer)."""
    values: dict[str, float | int | None] = dict.fromkeys(POSITION_CSV_COLUMNS)
    if row is None:
        return values
    for half in HALVES:
        figures: Mapping[str, object] = row["first"] if half == "first" else row["second"]
        for figure in HALF_FIGURES:
            value = figures[figure]
            values[f"{half}_half_{figure}"] = value if isinstance(value, (int, float)) else None
    values["position_change"] = row["change"]
    return values


# --- people against each agent run, paired by puzzle -------------------------------------------
VERSUS_NOTE = (
    "On the puzzles that people and the run both answered, paired by puzzle, and over the types both "
    "answered only: Pass@1 is the mean over those puzzles of the share right on each (people's answers, "
    "the run's rollouts); the difference is people's minus the run's, in percentage points, over types the "
    "mean of the types'. Its 95% interval follows the rule of Pass@1's, each with its method beside it: "
    f"where {MIN_PEOPLE_FOR_BOOTSTRAP} people or more answered, the report's cluster bootstrap over people "
    "(each drawn person brings all their answers, the run's Pass@1 on each of those puzzles beside it); "
    "with fewer (few participants), or when every resample gives the same difference (no spread), an exact "
    "interval taking each person as one observation: Clopper-Pearson's intervals of the two discordant "
    "shares (people right and the run wrong; the run right and people wrong), each at 97.5% over the "
    "effective number of people, combined by Bonferroni into one that holds at 95% or more. The puzzles are "
    "taken as given, and so is the run's Pass@1 on each. A puzzle is solved by people when most of its "
    "answers are right, by the run when most of its rollouts are; the last two columns count the puzzles "
    "one solves and the other does not, with their share. Chance is what a blind guess scores on the type's "
    "puzzles (an answer drawn from what the page lets anyone enter, sent through the same verifier); actions and "
    "time are the run's median over its rollouts as a multiple of people's median on the same puzzle, the median "
    "over the type's puzzles (over types, over all of them)."
)
VERSUS_CSV_FIGURES = (
    "puzzles",
    "difference",
    "ci_low",
    "ci_high",
    "ci_method",
    "ci_people",
    "people_only",
    "agent_only",
    "chance_rate",
    "actions_ratio",
    "time_ratio",
)


def versus_name(versus: Versus, index: int) -> str:
    """The run's name, or "agent N" (as agent_name) when it has none."""
    return versus["name"] or f"agent {index + 1}"


def versus_title(versus: Versus, index: int) -> str:
    """ "People vs <run>"."""
    return f"People vs {versus_name(versus, index)}"


def versus_headers(versus: Versus, index: int) -> list[str]:
    """The headline table's headers, naming the run."""
    name = versus_name(versus, index)
    return [
        "Type",
        "Puzzles",
        "People Pass@1",
        f"{name} Pass@1",
        "Difference, pts [95% CI]",
        "95% CI method",
        "People solve, agent not",
        "Agent solves, people not",
        "Chance",
        "Actions × people's",
        "Time × people's",
    ]


def fmt_points(value: float | None) -> str:
    """A difference of proportions in percentage points, signed ("+8.3", "−66.7"); "–" when missing."""
    if not is_number(value):
        return DASH
    points = round(value * 100, 1) + 0.0  # + 0.0 turns a -0.0 into 0.0: no "−0.0"
    return f"{points:+.1f}".replace("-", "−")


def fmt_difference(value: float | None, low: float | None, high: float | None) -> str:
    """A difference with its interval ("+8.3 [−66.7, +75.0]"); "–" when missing."""
    if not is_number(value):
        return DASH
    if is_number(low) and is_number(high):
        return f"{fmt_points(value)} [{fmt_points(low)}, {fmt_points(high)}]"
    return fmt_points(value)


def fmt_share(count: int, share: float | None) -> str:
    """A count of puzzles with its share ("1 (25.0%)")."""
    return f"{fmt_count(count)} ({fmt_pct(share)})" if is_number(share) else fmt_count(count)


def versus_row_cells(row: VersusRow) -> list[str]:
    """A row of the headline table (versus_headers)."""
    return [
        "All types (mean)" if row["type"] == "all types" else row["type"] or DASH,
        fmt_count(row["puzzles"]),
        fmt_pct(row["people_pass1"]),
        fmt_pct(row["agent_pass1"]),
        fmt_difference(row["difference"], row["ci_low"], row["ci_high"]),
        fmt_ci_method(row["ci_method"], row["ci_people"]),
        fmt_share(row["people_only"], row["people_only_share"]),
        fmt_share(row["agent_only"], row["agent_only_share"]),
        fmt_chance(row["chance_rate"]),
        fmt_times(row["actions_ratio"]),
        fmt_times(row["time_ratio"]),
    ]


def fmt_chance(rate: float | None) -> str:
    """A chance rate as a percent with two decimals; "< 0.01%" when a guess all but never passes."""
    if not is_number(rate):
        return DASH
    return fmt_pct(rate, 2) if rate >= 0.0001 or rate == 0 else "< 0.01%"


def fmt_times(ratio: float | None) -> str:
    """A multiple ("2.50×"); "–" when missing."""
    return f"{ratio:.2f}×" if is_number(ratio) else DASH


def versus_table_rows(versus: Versus) -> list[list[str]]:
    """Each type's row, then the row over types; [] without a puzzle both answered."""
    if not versus["rows"]:
        return []
    return [versus_row_cells(row) for row in [*versus["rows"], versus["overall"]]]


def versus_method_line(versus: Versus) -> str:
    """What the comparison is over, and the bootstrap's resamples and seed, so the interval can be made again."""
    overall = versus["overall"]
    line = (
        f"Over {plural(len(versus['rows']), 'type')} and {plural(overall['puzzles'], 'puzzle')} both answered, "
        f"{plural(overall['answers'], 'answer')} by {fmt_count(overall['people'])} "
        f"{'person' if overall['people'] == 1 else 'people'}"
    )
    if not any(row["ci_method"] == BY_BOOTSTRAP for row in [*versus["rows"], overall]):
        return f"{line}; every interval exact."
    if versus["seed"] is None:
        resamples = f"every one of the {fmt_count(versus['resamples'])} distinct resamples of people"
    else:
        resamples = f"{fmt_count(versus['resamples'])} resamples of people, seed {fmt_count(versus['seed'])}"
    return f"{line}; the bootstrap: {resamples}."


def unpaired_reason(unpaired: UnpairedType, dropped: Mapping[str, str]) -> str:
    """Why a type is left out of one run's comparison: people's side (dropped_type_reason), the
    run's, or no puzzle in common."""
    if not unpaired["people_puzzles"]:
        return f"people: {dropped.get(unpaired['type'], 'no counted answer')}"
    if not unpaired["run_puzzles"]:
        failed = unpaired["run_failed"]
        return "the run has no complete puzzle of it" + (f" ({plural(failed, 'failed rollout')})" if failed else "")
    return (
        f"no puzzle both answered (people on {plural(unpaired['people_puzzles'], 'puzzle')}, "
        f"the run on {fmt_count(unpaired['run_puzzles'])} others)"
    )


def versus_unpaired_line(report: StudyReport, versus: Versus) -> str:
    """The types one side has that the comparison leaves out, each with why; "" when none."""
    if not versus["unpaired"]:
        return ""
    dropped = dropped_reasons(report)
    each = "; ".join(f"{row['type']} ({unpaired_reason(row, dropped)})" for row in versus["unpaired"])
    return f"Not compared, one side having none of it: {each}."


# --- training environment runs per checkpoint, and contamination --------------------------------
TRAINING_NOTE = (
    "Runs fed by the training environment (docs/environment.md), one per trainer and checkpoint, on "
    "puzzles of this report's datasets, any split. Success: the share of a checkpoint's episodes that "
    "ended (submitted or not) with a correct answer; episodes closed before their end are left out. "
    "Beside it, people's Pass@1 on the same type in this study. Over types, each type weighs the same; "
    "people's line is their mean over the types the checkpoint played."
)


def training_headers(client: TrainingClient) -> list[str]:
    """Type, people, then one column per checkpoint."""
    return ["Type", "People Pass@1", *(point["checkpoint"] for point in client["checkpoints"])]


def fmt_success(success: float | None, episodes: int) -> str:
    """ "62.5% (16)": the share solved, with its episodes; a dash without any."""
    return f"{fmt_pct(success)} ({fmt_count(episodes)})" if episodes else DASH


def training_table_rows(client: TrainingClient, people: list[TypeRow]) -> list[list[str]]:
    """Per type the checkpoint's played, people's Pass@1 and each checkpoint's success; then the
    means over types, and people's mean over each checkpoint's types (the human line)."""
    points = client["checkpoints"]
    pass1 = {row["type"]: row["pass1"] for row in people}
    per_point = [{row["type"]: row for row in point["types"]} for point in points]
    rows = []
    for name in sorted({kind for played in per_point for kind in played}):
        cells = [name, fmt_pct(pass1[name]) if name in pass1 else DASH]
        for played in per_point:
            row = played.get(name)  # a type this checkpoint did not play
            cells.append(fmt_success(row["success"], row["episodes"]) if row else DASH)
        rows.append(cells)
    rows.append(["Mean over types", DASH, *(fmt_success(p["mean_success_over_types"], p["episodes"]) for p in points)])
    rows.append(["People, same types", DASH, *(fmt_pct(p["people_mean_pass1"]) for p in points)])
    return rows


def training_details(client: TrainingClient) -> list[str]:
    """Each checkpoint's run, start, episodes and those left out."""
    return [
        f"{point['checkpoint']}: run {point['run']} ({point['name']}), from {point['started_at'] or DASH}, "
        f"{plural(point['episodes'], 'episode')} ended, {fmt_count(point['solved'])} solved "
        f"({fmt_pct(point['success_pooled'])} pooled)"
        + (f", {plural(point['failed'], 'episode')} closed before the end left out" if point["failed"] else "")
        for point in client["checkpoints"]
    ]


def training_scope_line(report: StudyReport) -> str:
    """Which datasets the training runs are counted on, or that there are none."""
    training = report["training"]
    where = ", ".join(training["datasets"]) or DASH
    if not training["clients"]:
        return f"No training environment episodes on puzzles of {where}."
    return f"Episodes on puzzles of {where}."


def contamination_lines(report: StudyReport) -> list[str]:
    """Whether the report's puzzles were trained on: how many, of which types, by which runs, and
    whether they were left out; one sentence when none was."""
    found = report["contamination"]
    if not found["trained"]:
        pool = plural(found["pool"], "puzzle")
        return [f"No puzzle of this report ({pool}) was trained on (played in a training environment episode)."]
    by_type = ", ".join(f"{name} {fmt_count(n)}" for name, n in found["by_type"].items())
    lines = [
        f"{fmt_count(found['trained'])} of the {plural(found['pool'], 'puzzle')} were trained on "
        f"(played in training environment episodes: {by_type}) by {', '.join(found['runs'])}."
    ]
    if found["excluded"]:
        lines.append("They are left out of this report: people's and agents' figures are on the rest.")
    else:
        lines.append(
            f"They are counted here: people answered them {plural(found['people_answers'], 'time')}; "
            "each agent's count is beside it. A model trained on a puzzle is not evaluated on it: "
            "exclude them (report --exclude-trained) for a clean comparison."
        )
    return lines
