"""The two SVG charts of the HTML report, as plain geometry for templates/reporting/ to draw.

Owns the charts' numbers: the scales, grids and ticks, and the place, colour, label and tooltip of
every bar, whisker, box and dot. No markup here: reporting/pass1_chart.html and
reporting/time_chart.html draw these shapes, and their autoescaping covers every label and tooltip
(type and agent names come from the report and can hold markup).

    pass1_chart(report) -> Chart | None  Pass@1 per type, people with clustered 95% whiskers, agents beneath
    time_chart(report) -> Chart | None   wall and active time per type as box plots on a log axis
    scatter_chart(versus, colour)        per puzzle, people's Pass@1 against an agent run's, a panel per type
    training_chart(client, colour)       a trainer's success across its checkpoints against people's line
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

from annotation.reporting.report_types import (
    ScatterPoint,
    StudyReport,
    TimeSample,
    TrainingCheckpoint,
    TrainingClient,
    TypeRow,
    Versus,
)
from annotation.reporting.wording import (
    DASH,
    PEOPLE_COLOUR,
    agent_colour,
    agent_name,
    agent_types,
    all_type_names,
    fmt_count,
    fmt_pass1,
    fmt_pct,
    fmt_seconds,
    is_number,
    type_name,
)

# Colours of the charts alone; people's and the agents' colours are shared with the tables (wording.py).
WALL_COLOUR = "#94a3b8"
ACTIVE_COLOUR = "#60a5fa"
INK = "#1f2937"
GRID = "#e5e7eb"
MAJOR_GRID = "#d1d5db"
MINOR_GRID = "#f1f5f9"
RULE = "#9ca3af"
WHISKER = "#475569"
BOX_EDGE = "#334155"
BAND = "#f8fafc"

# Geometry, in SVG user units (the SVG scales to the page width).
CHART_WIDTH = 960
CHART_RIGHT_PAD = 64  # room for the value printed after a bar that reaches 100%
CHART_TOP = 12
AXIS_HEIGHT = 48
CHAR_WIDTH = 7.0  # rough width of one 12-unit character, to size the label column
BAR_H, AGENT_H, BAR_GAP = 14.0, 7.0, 3.0  # chart 1: people's bar, an agent's bar, the gap between
BOX_H, TIME_ROW_H = 9.0, 32.0  # chart 2: one box, one type's pair of boxes
TIME_RIGHT_PAD = 36  # room for half of the last tick label
MIN_SECONDS = 0.05  # floor for the log time axis; a zero time is drawn here
LOG_STEPS = (1, 2, 5)  # labelled ticks on the log axis: 1, 2, 5, 10, 20, 50 ...


# --- shapes: what the templates draw ----------------------------------------------------------


def compact(value: float) -> float:
    """A coordinate to 0.1 unit, whole ones as int: a compact SVG ("12", not "12.0") that looks the same."""
    value = round(value, 1)
    return int(value) if value.is_integer() else value


class Shape:
    """Compacts its float fields once built, so that the templates print them as they are."""

    def __post_init__(self) -> None:
        for each in fields(self):  # type: ignore[arg-type]
            if isinstance(getattr(self, each.name), float):
                setattr(self, each.name, compact(getattr(self, each.name)))


@dataclass
class Line(Shape):
    """A grid line, whisker, cap, median mark or the rule above the means."""

    x1: float
    y1: float
    x2: float
    y2: float
    colour: str
    width: float = 1
    cls: str = ""
    dash: str = ""  # a stroke-dasharray


@dataclass
class Text(Shape):
    """A label, tick label or printed value, centred vertically on y."""

    x: float
    y: float
    value: str
    cls: str = ""
    anchor: str = "start"
    bold: bool = False


@dataclass
class Rect(Shape):
    """A bar or box with its hover tooltip, or a plain background band."""

    x: float
    y: float
    width: float
    height: float
    fill: str
    cls: str = ""
    tip: str = ""
    rx: float = 0
    stroke: str = ""  # an outline of width 1


@dataclass
class Dot(Shape):
    """An outlier of a box plot, as a hollow circle."""

    x: float
    y: float
    colour: str = WHISKER
    r: float = 2.2


@dataclass
class Axis:
    """The grid lines, their tick labels and the axis title below them."""

    grid: list[Line]
    ticks: list[Text]
    title: Text


@dataclass
class Chart:
    """One chart: the legend above it (colour, text), then the SVG of its axis, bands and rows."""

    label: str  # what the chart shows, for screen readers
    height: float
    legend: list[tuple[str, str]]
    axis: Axis
    rows: list[Pass1Row] | list[TimeRow]
    bands: list[Rect] = field(default_factory=list)
    width: int = CHART_WIDTH


@dataclass
class Bar:
    """One Pass@1 bar and the value printed after it; people's bar has a CI whisker. No bar: the text says so."""

    rect: Rect | None
    text: Text
    whisker: list[Line] = field(default_factory=list)


@dataclass
class Pass1Row:
    """One type in chart 1 (or the means, below a dashed rule): its label, people's bar, each agent's bar."""

    label: Text
    bars: list[Bar]
    rule: Line | None = None


@dataclass
class Box:
    """One box plot: whiskers with caps, the IQR box, the median mark and the outliers; a dash when unknown."""

    rect: Rect | None = None
    median: Line | None = None
    whiskers: list[Line] = field(default_factory=list)
    outliers: list[Dot] = field(default_factory=list)
    missing: Text | None = None


@dataclass
class TimeRow:
    """One type in chart 2: its label, the wall time box above the active time box."""

    label: Text
    boxes: list[Box]


# --- shared by both charts --------------------------------------------------------------------


def label_width(labels: list[str]) -> float:
    """Width of the category label column, sized to the longest label."""
    longest = max((len(label) for label in labels), default=8)
    return min(240.0, max(110.0, longest * CHAR_WIDTH + 18))


def clip_label(label: str, width: float) -> str:
    """A label shortened with an ellipsis to fit the label column."""
    fits = max(4, int((width - 18) / CHAR_WIDTH))
    return label if len(label) <= fits else label[: fits - 1] + "…"


def row_label(label: str, x0: float, y: float, bold: bool = False) -> Text:
    """A row's label, right-aligned against the plot that starts at x0."""
    return Text(x0 - 10, y, clip_label(label, x0), anchor="end", bold=bold)


def tick(x: float, bottom: float, value: str) -> Text:
    """A tick label centred under its grid line."""
    return Text(x, bottom + 14, value, "tick", "middle")


def axis_title(x0: float, x1: float, bottom: float, value: str) -> Text:
    """The axis title, centred under the tick labels."""
    return Text((x0 + x1) / 2, bottom + 36, value, "axis-title", "middle")


# --- Chart 1: Pass@1 per type, people with CIs beside agents ------------------------------------


@dataclass
class BarScale:
    """Chart 1's layout: 0% at x0 (after the label column), 100% at x1, row_h per type."""

    x0: float
    x1: float
    row_h: float

    def x(self, p: float) -> float:
        """Where a proportion falls, clamped to 0..1."""
        return self.x0 + (self.x1 - self.x0) * min(max(p, 0.0), 1.0)


@dataclass(frozen=True)
class Pass1Values:
    """What one row of chart 1 shows: people's Pass@1 with its interval, and each agent's Pass@1."""

    label: str
    pass1: float | None
    low: float | None
    high: float | None
    agents: list[float | None]
    correct: int | None = None  # people's counts, for the tooltip; None on the means
    attempts: int | None = None


def pass1_rows(report: StudyReport) -> list[Pass1Values]:
    """Per type: the label, people's Pass@1 and CI, and each agent's Pass@1 (None when missing)."""
    people = {type_name(row): row for row in report["types"]}
    per_agent = [agent_types(agent) for agent in report["agents"]]
    rows = []
    for name in all_type_names(report):
        person = people.get(name)  # a type only agents have
        agents = [row["pass1"] if (row := by_type.get(name)) else None for by_type in per_agent]
        rows.append(_people_values(name, person, agents))
    return rows


def _people_values(name: str, person: TypeRow | None, agents: list[float | None]) -> Pass1Values:
    """A type's row of chart 1; people's figures empty when no person answered the type."""
    if person is None:
        return Pass1Values(name, None, None, None, agents)
    return Pass1Values(
        name, person["pass1"], person["ci_low"], person["ci_high"], agents, person["correct"], person["attempts"]
    )


def mean_row(report: StudyReport) -> Pass1Values:
    """The closing row of chart 1: the means over types, people's with its clustered interval, each
    agent's over the types people have too (not over types people have no Pass@1 on)."""
    overall = report["overall"]
    return Pass1Values(
        label="Mean over types",
        pass1=overall["mean_pass1_over_types"],
        low=overall["mean_ci_low"],
        high=overall["mean_ci_high"],
        agents=[agent["mean_pass1_shared"] for agent in report["agents"]],
    )


def pct_axis(scale: BarScale, bottom: float) -> Axis:
    """Vertical grid every 10% with labels every 20%, from 0 to 100%."""
    xs = [(step, scale.x(step / 10)) for step in range(11)]
    return Axis(
        grid=[Line(x, CHART_TOP, x, bottom, GRID if step % 2 else MAJOR_GRID) for step, x in xs],
        ticks=[tick(x, bottom, f"{step * 10}%") for step, x in xs if step % 2 == 0],
        title=axis_title(
            scale.x0, scale.x1, bottom, "Pass@1 (% of answers solved; whiskers: 95% interval clustered by annotator)"
        ),
    )


def people_tip(row: Pass1Values) -> str:
    """The tooltip of people's bar: Pass@1 with its interval, and out of how many attempts."""
    tip = f"{row.label}: people {fmt_pass1(row.pass1, row.low, row.high)}"
    if is_number(row.attempts):
        tip += f", {fmt_count(row.correct)} of {fmt_count(row.attempts)} attempts"
    return tip


def ci_whisker(low: float, high: float, mid: float) -> list[Line]:
    """The 95% interval as a line with a cap at each end; class "ci" marks the interval itself."""
    return [
        Line(low, mid, high, mid, INK, 1.5, "ci"),
        Line(low, mid - 5, low, mid + 5, INK, 1.5),
        Line(high, mid - 5, high, mid + 5, INK, 1.5),
    ]


def people_bar(row: Pass1Values, scale: BarScale, y: float, cls: str) -> Bar:
    """People's bar for one row, with its CI whisker and its value printed after both."""
    value, low, high, mid = row.pass1, row.low, row.high, y + BAR_H / 2
    if not is_number(value):
        return Bar(None, Text(scale.x(0) + 4, mid, f"{DASH} no attempts", "tick"))
    right, whisker = scale.x(value), []
    if is_number(low) and is_number(high):
        right, whisker = max(right, scale.x(high)), ci_whisker(scale.x(low), scale.x(high), mid)
    return Bar(
        rect=Rect(scale.x(0), y, scale.x(value) - scale.x(0), BAR_H, PEOPLE_COLOUR, cls, people_tip(row), rx=2),
        text=Text(right + 6, mid, fmt_pct(value), bold=True),
        whisker=whisker,
    )


def agent_bar(label: str, agent: str, value: float | None, colour: str, scale: BarScale, y: float) -> Bar:
    """One agent's thin bar for one row, with its value printed after it."""
    mid = y + AGENT_H / 2
    if not is_number(value):
        return Bar(None, Text(scale.x(0) + 4, mid, DASH, "tick"))
    tip = f"{label}: {agent} {fmt_pct(value)}"
    rect = Rect(scale.x(0), y, scale.x(value) - scale.x(0), AGENT_H, colour, "bar-agent", tip, rx=1)
    return Bar(rect, Text(scale.x(value) + 5, mid, fmt_pct(value), "tick"))


def pass1_row(row: Pass1Values, index: int, scale: BarScale, names: list[str], is_mean: bool) -> Pass1Row:
    """One row of chart 1; the means sit a little lower, under a dashed rule."""
    y = CHART_TOP + scale.row_h * index + 6 + (8 if is_mean else 0)
    bars = [people_bar(row, scale, y, "bar-mean" if is_mean else "bar-people")]
    for k, (name, value) in enumerate(zip(names, row.agents)):
        agent_y = y + BAR_H + BAR_GAP + k * (AGENT_H + BAR_GAP)
        bars.append(agent_bar(row.label, name, value, agent_colour(k), scale, agent_y))
    return Pass1Row(
        label=row_label(row.label, scale.x0, y + BAR_H / 2, bold=is_mean),
        bars=bars,
        rule=Line(8, y - 7, scale.x1, y - 7, RULE, dash="4 3") if is_mean else None,
    )


def pass1_chart(report: StudyReport) -> Chart | None:
    """Chart 1: horizontal Pass@1 bars per type with CI whiskers, agents' thinner bars beneath; None without types."""
    rows = pass1_rows(report)
    if not rows:
        return None
    names = [agent_name(agent, i) for i, agent in enumerate(report["agents"])]
    rows.append(mean_row(report))
    row_h = BAR_H + len(names) * (AGENT_H + BAR_GAP) + 12
    scale = BarScale(label_width([row.label for row in rows]), CHART_WIDTH - CHART_RIGHT_PAD, row_h)
    bottom = CHART_TOP + row_h * len(rows) + 8
    legend = [(PEOPLE_COLOUR, "People (bar: Pass@1, whisker: 95% CI)")]
    return Chart(
        label="Pass@1 per puzzle type",
        height=compact(bottom + AXIS_HEIGHT),
        legend=legend + [(agent_colour(k), name) for k, name in enumerate(names)],
        axis=pct_axis(scale, bottom),
        rows=[pass1_row(row, i, scale, names, is_mean=i == len(rows) - 1) for i, row in enumerate(rows)],
    )


# --- Chart 2: time distributions as box plots -------------------------------------------------


def quantile(sorted_values: list[float], q: float) -> float:
    """Linearly interpolated quantile of sorted values (numpy's default method)."""
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


@dataclass(frozen=True)
class BoxStats:
    """Box-plot numbers in ms; low, high and n unknown when only the report's quartiles are."""

    median: float
    q1: float
    q3: float
    low: float | None = None
    high: float | None = None
    outliers: list[float] = field(default_factory=list)
    n: int | None = None


def box_stats(
    values: Sequence[float | None], median: float | None, q1: float | None, q3: float | None
) -> BoxStats | None:
    """Box-plot numbers in ms: the report's median and quartiles (computed from the values when
    missing), whiskers at the furthest values within 1.5 IQR of the box, and the values beyond."""
    data = sorted(v for v in values if is_number(v))
    if not (is_number(median) and is_number(q1) and is_number(q3)):
        if not data:
            return None
        median, q1, q3 = (quantile(data, q) for q in (0.5, 0.25, 0.75))
    if not data:
        return BoxStats(median, q1, q3)
    reach = 1.5 * (q3 - q1)
    inside = [v for v in data if q1 - reach <= v <= q3 + reach] or [median]
    return BoxStats(
        median=median,
        q1=q1,
        q3=q3,
        low=min(min(inside), q1),
        high=max(max(inside), q3),
        n=len(data),
        outliers=[v for v in data if v < q1 - reach or v > q3 + reach],
    )


@dataclass(frozen=True)
class TimeValues:
    """What one row of chart 2 shows: a type's wall and active time boxes (None when nothing is known)."""

    label: str
    wall: BoxStats | None
    active: BoxStats | None


def time_rows(report: StudyReport) -> list[TimeValues]:
    """Per type: the label and the wall and active box-plot numbers (None when nothing is known)."""
    return [_time_values(row, report["times"].get(type_name(row))) for row in report["types"]]


def _time_values(row: TypeRow, recorded: TimeSample | None) -> TimeValues:
    """A type's boxes, from its recorded times (none kept: from the quartiles in its row)."""
    return TimeValues(
        label=type_name(row),
        wall=box_stats(
            recorded["wall_ms"] if recorded else [], row["wall_median_ms"], row["wall_q1_ms"], row["wall_q3_ms"]
        ),
        active=box_stats(
            recorded["active_ms"] if recorded else [],
            row["active_median_ms"],
            row["active_q1_ms"],
            row["active_q3_ms"],
        ),
    )


def log_ticks(low_s: float, high_s: float) -> list[float]:
    """1-2-5 ticks in seconds, from the last one at or below low_s to the first at or above high_s."""
    tolerance = 1e-9
    ticks: list[float] = []
    decade = 10.0 ** math.floor(math.log10(low_s))
    while not ticks or ticks[-1] < high_s * (1 - tolerance):
        ticks += [step * decade for step in LOG_STEPS]
        decade *= 10
    end = next(i for i, tick in enumerate(ticks) if tick >= high_s * (1 - tolerance))
    start = max(i for i, tick in enumerate(ticks[: end + 1]) if tick <= low_s * (1 + tolerance))
    return ticks[start : end + 1]


def fmt_tick(seconds: float) -> str:
    """A tick label in seconds ("0.5 s", "20 s", "200 s")."""
    return f"{seconds:g} s"


def time_range_seconds(rows: list[TimeValues]) -> tuple[float, float] | None:
    """Smallest and largest time drawn on the chart, in seconds, floored at MIN_SECONDS."""
    values: list[float] = []
    for row in rows:
        for box in (row.wall, row.active):
            if box:
                values += [v for v in (box.low, box.q1, box.median, box.q3, box.high) if is_number(v)]
                values += box.outliers
    if not values:
        return None
    return max(min(values) / 1000, MIN_SECONDS), max(max(values) / 1000, MIN_SECONDS * 2)


@dataclass
class LogScale:
    """Chart 2's x axis: a log scale in seconds from the first tick at x0 to the last at x1."""

    x0: float
    x1: float
    ticks: list[float]  # seconds

    def x(self, ms: float) -> float:
        """Where a time in milliseconds falls; a time under MIN_SECONDS at MIN_SECONDS."""
        low, high = math.log10(self.ticks[0]), math.log10(self.ticks[-1])
        seconds = max(ms / 1000, MIN_SECONDS)
        return self.x0 + (self.x1 - self.x0) * (math.log10(seconds) - low) / (high - low or 1)


def minor_steps(ticks: list[float]) -> list[float]:
    """The unlabelled 3, 4, 6, 7, 8 and 9 of each decade between the first and the last tick, in seconds."""
    steps, decade = [], 10.0 ** math.floor(math.log10(ticks[0]))
    while decade <= ticks[-1]:
        steps += [s * decade for s in range(1, 10) if s not in LOG_STEPS and ticks[0] <= s * decade <= ticks[-1]]
        decade *= 10
    return steps


def time_axis(scale: LogScale, bottom: float) -> Axis:
    """Light lines at every 1..9 step, labelled lines at 1-2-5 steps (and the light ones labelled too
    when the axis spans so little that 1-2-5 gives fewer than 4 labels)."""
    minor = minor_steps(scale.ticks)
    labelled = (minor if len(scale.ticks) < 4 else []) + scale.ticks
    lines = [(s, MINOR_GRID) for s in minor] + [(s, MAJOR_GRID) for s in scale.ticks]
    return Axis(
        grid=[Line(scale.x(s * 1000), CHART_TOP, scale.x(s * 1000), bottom, colour) for s, colour in lines],
        ticks=[tick(scale.x(s * 1000), bottom, fmt_tick(s)) for s in labelled],
        title=axis_title(scale.x0, scale.x1, bottom, "Time per attempt (seconds, log scale)"),
    )


def box_tip(box: BoxStats, label: str, kind: str) -> str:
    """The tooltip of a box: median and IQR in seconds, and how many attempts."""
    n = f", n = {box.n}" if box.n else ""
    return (
        f"{label}, {kind} time: median {fmt_seconds(box.median)} s, IQR "
        f"{fmt_seconds(box.q1)}–{fmt_seconds(box.q3)} s{n}"
    )


def box_whiskers(box: BoxStats, scale: LogScale, y: float) -> list[Line]:
    """From the box out to the furthest attempts within 1.5 IQR, with caps; none without the times."""
    if not (is_number(box.low) and is_number(box.high)):
        return []
    mid, low, high = y + BOX_H / 2, scale.x(box.low), scale.x(box.high)
    return [
        Line(low, mid, scale.x(box.q1), mid, WHISKER),
        Line(scale.x(box.q3), mid, high, mid, WHISKER),
        Line(low, y + 1, low, y + BOX_H - 1, WHISKER),
        Line(high, y + 1, high, y + BOX_H - 1, WHISKER),
    ]


def box_plot(box: BoxStats | None, label: str, kind: str, colour: str, scale: LogScale, y: float) -> Box:
    """One horizontal box plot of wall or active time, its top at y."""
    if not box:
        return Box(missing=Text(scale.x(MIN_SECONDS * 1000) + 4, y + BOX_H / 2, DASH, "tick"))
    q1, q3, median = scale.x(box.q1), scale.x(box.q3), scale.x(box.median)
    return Box(
        rect=Rect(q1, y, max(q3 - q1, 0), BOX_H, colour, f"box-{kind}", box_tip(box, label, kind), stroke=BOX_EDGE),
        median=Line(median, y, median, y + BOX_H, INK, 2),
        whiskers=box_whiskers(box, scale, y),
        outliers=[Dot(scale.x(v), y + BOX_H / 2) for v in box.outliers],
    )


def time_row(row: TimeValues, index: int, scale: LogScale) -> TimeRow:
    """One type of chart 2: wall time at the top of its row, active time at the bottom."""
    y = CHART_TOP + TIME_ROW_H * index
    return TimeRow(
        label=row_label(row.label, scale.x0, y + TIME_ROW_H / 2),
        boxes=[
            box_plot(row.wall, row.label, "wall", WALL_COLOUR, scale, y + 5),
            box_plot(row.active, row.label, "active", ACTIVE_COLOUR, scale, y + TIME_ROW_H - 5 - BOX_H),
        ],
    )


def row_bands(scale: LogScale, count: int) -> list[Rect]:
    """A light band behind every other row, so that the two boxes of a type read together."""
    return [
        Rect(scale.x0, CHART_TOP + TIME_ROW_H * i, scale.x1 - scale.x0, TIME_ROW_H, BAND) for i in range(1, count, 2)
    ]


def time_chart(report: StudyReport) -> Chart | None:
    """Chart 2: wall and active time per type as box plots on a log axis in seconds; None without times."""
    rows = [row for row in time_rows(report) if row.wall or row.active]
    span = time_range_seconds(rows)
    if span is None:
        return None
    scale = LogScale(label_width([row.label for row in rows]), CHART_WIDTH - TIME_RIGHT_PAD, log_ticks(*span))
    bottom = CHART_TOP + TIME_ROW_H * len(rows)
    return Chart(
        label="Time per attempt per puzzle type",
        height=compact(bottom + AXIS_HEIGHT),
        legend=[(WALL_COLOUR, "Wall time"), (ACTIVE_COLOUR, "Active time (page visible)")],
        axis=time_axis(scale, bottom),
        rows=[time_row(row, i, scale) for i, row in enumerate(rows)],
        bands=row_bands(scale, len(rows)),
    )


# --- Chart 3: per puzzle, people's Pass@1 against an agent run's, one small panel per type -----

PANEL = 200  # each panel's square viewBox, in SVG units
# Room for a full-size bubble at 0% and 100% both ways, the title above and the labels below.
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 36.0, 186.0, 34.0, 168.0
MAX_BUBBLE, MIN_BUBBLE = 11.0, 2.5


@dataclass
class Bubble(Shape):
    """Puzzles that share a point (people's Pass@1, the agent's), as a circle sized by their count."""

    x: float
    y: float
    r: float
    colour: str
    tip: str


@dataclass
class Panel:
    """One type: its title, grid and tick labels, the diagonal where people and agent are level, the bubbles."""

    title: Text
    grid: list[Line]
    ticks: list[Text]
    diagonal: Line
    bubbles: list[Bubble]
    size: int = PANEL


@dataclass
class ScatterChart:
    """Chart 3: a legend, then one panel per type; each panel its own small SVG, so that they wrap."""

    label: str
    legend: list[tuple[str, str]]
    panels: list[Panel]


def panel_x(p: float) -> float:
    return PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * p


def panel_y(p: float) -> float:
    return PLOT_BOTTOM - (PLOT_BOTTOM - PLOT_TOP) * p


def panel_axes() -> tuple[list[Line], list[Text]]:
    """Grid lines at 0, 50 and 100% both ways, labelled on the left and at the bottom."""
    grid, ticks = [], []
    for step in (0.0, 0.5, 1.0):
        colour = MAJOR_GRID if step != 0.5 else GRID
        grid += [
            Line(panel_x(step), PLOT_TOP, panel_x(step), PLOT_BOTTOM, colour),
            Line(PLOT_LEFT, panel_y(step), PLOT_RIGHT, panel_y(step), colour),
        ]
        label = f"{step * 100:.0f}"
        ticks += [
            Text(panel_x(step), PLOT_BOTTOM + 12, label, "tick", "middle"),
            Text(PLOT_LEFT - 5, panel_y(step), label, "tick", "end"),
        ]
    ticks.append(Text(PLOT_RIGHT, PLOT_BOTTOM + 24, "people →", "tick", "end"))
    ticks.append(Text(PLOT_LEFT + 4, PLOT_TOP + 7, "↑ agent", "tick"))
    return grid, ticks


def scatter_panel(name: str, points: list[ScatterPoint], colour: str, largest: int, agent: str) -> Panel:
    """One type's panel: each point's area grows with its puzzles, the largest of the run at MAX_BUBBLE."""
    grid, ticks = panel_axes()
    puzzles = sum(p["puzzles"] for p in points)
    bubbles = [
        Bubble(
            panel_x(p["people"]),
            panel_y(p["agent"]),
            MIN_BUBBLE + (MAX_BUBBLE - MIN_BUBBLE) * math.sqrt(p["puzzles"] / largest),
            colour,
            f"{name}: people {fmt_pct(p['people'])}, {agent} {fmt_pct(p['agent'])}: "
            f"{fmt_count(p['puzzles'])} puzzle{'' if p['puzzles'] == 1 else 's'}",
        )
        for p in points
    ]
    return Panel(
        title=Text(PLOT_LEFT - 28, 12, f"{clip_label(name, 200)} ({fmt_count(puzzles)})", bold=True),
        grid=grid,
        ticks=ticks,
        diagonal=Line(panel_x(0), panel_y(0), panel_x(1), panel_y(1), RULE, dash="4 3"),
        bubbles=bubbles,
    )


def scatter_chart(versus: Versus, colour: str) -> ScatterChart | None:
    """Per type, each puzzle both answered at (people's Pass@1, the run's); None without such a puzzle."""
    points = versus["points"]
    if not points:
        return None
    largest = max(p["puzzles"] for p in points)
    by_type: dict[str, list[ScatterPoint]] = {}
    for point in points:
        by_type.setdefault(point["type"], []).append(point)
    agent = versus["name"] or "agent"
    return ScatterChart(
        label=f"Per puzzle, people's Pass@1 against {agent}'s, per type",
        legend=[(colour, f"{agent}: a circle per point, its area the puzzles there (largest: {largest})")],
        panels=[scatter_panel(name, group, colour, largest, agent) for name, group in sorted(by_type.items())],
    )


# --- Chart 4: a trainer's success across checkpoints against people's line --------------------

TRAINING_HEIGHT = 300
TRAIN_LEFT, TRAIN_RIGHT, TRAIN_TOP, TRAIN_BOTTOM = 56.0, 930.0, 16.0, 236.0


@dataclass
class TrainingChart:
    """Chart 4: the legend, then one SVG: grid, checkpoint ticks, people's dashed line (a step per
    checkpoint: their mean over the types it played), the run's line and a dot per checkpoint."""

    label: str
    legend: list[tuple[str, str]]
    grid: list[Line]
    ticks: list[Text]
    title: Text
    people: list[Line]
    progress: list[Line]
    dots: list[Bubble]
    width: int = CHART_WIDTH
    height: int = TRAINING_HEIGHT


def train_y(p: float) -> float:
    return TRAIN_BOTTOM - (TRAIN_BOTTOM - TRAIN_TOP) * min(max(p, 0.0), 1.0)


def train_x(index: int, count: int) -> float:
    """Checkpoints evenly across, each in the middle of its slot."""
    step = (TRAIN_RIGHT - TRAIN_LEFT) / count
    return TRAIN_LEFT + step * (index + 0.5)


def training_axes(points: list[TrainingCheckpoint]) -> tuple[list[Line], list[Text]]:
    """Grid lines every 25%, labelled on the left; each checkpoint's label under its slot."""
    steps = (0.0, 0.25, 0.5, 0.75, 1.0)
    grid = [Line(TRAIN_LEFT, train_y(p), TRAIN_RIGHT, train_y(p), MAJOR_GRID if p in (0, 1) else GRID) for p in steps]
    ticks = [Text(TRAIN_LEFT - 6, train_y(p), f"{p * 100:.0f}%", "tick", "end") for p in steps]
    slot = (TRAIN_RIGHT - TRAIN_LEFT) / len(points)
    for index, point in enumerate(points):
        label = clip_label(point["checkpoint"], slot + 10)
        ticks.append(Text(train_x(index, len(points)), TRAIN_BOTTOM + 14, label, "tick", "middle"))
    return grid, ticks


def people_steps(points: list[TrainingCheckpoint]) -> list[Line]:
    """People's mean Pass@1 over each checkpoint's types, across that checkpoint's slot."""
    half = (TRAIN_RIGHT - TRAIN_LEFT) / len(points) / 2
    steps = []
    for i, point in enumerate(points):
        value = point["people_mean_pass1"]
        if is_number(value):
            x, y = train_x(i, len(points)), train_y(value)
            steps.append(Line(x - half, y, x + half, y, PEOPLE_COLOUR, 2, dash="6 4"))
    return steps


def training_chart(client: TrainingClient, colour: str) -> TrainingChart | None:
    """A trainer's mean success over types per checkpoint, joined in order, against people's line;
    None without a checkpoint that ended an episode."""
    points = client["checkpoints"]
    placed = [(i, p, p["mean_success_over_types"]) for i, p in enumerate(points)]
    placed_at = [(train_x(i, len(points)), train_y(v), p, v) for i, p, v in placed if is_number(v)]
    if not placed_at:
        return None
    grid, ticks = training_axes(points)
    name = client["client"]
    dots = [
        Bubble(
            x,
            y,
            4.0,
            colour,
            f"{point['checkpoint']}: {fmt_pct(value)} over {fmt_count(len(point['types']))} types "
            f"({fmt_count(point['episodes'])} episodes); people {fmt_pct(point['people_mean_pass1'])} on those types",
        )
        for x, y, point, value in placed_at
    ]
    progress = [Line(a[0], a[1], b[0], b[1], colour, 2) for a, b in itertools.pairwise(placed_at)]
    return TrainingChart(
        label=f"{name}: success per checkpoint against people's Pass@1",
        legend=[
            (colour, f"{name}: mean success over types, per checkpoint"),
            (PEOPLE_COLOUR, "People: mean Pass@1 over the same types (dashed)"),
        ],
        grid=grid,
        ticks=ticks,
        title=axis_title(TRAIN_LEFT, TRAIN_RIGHT, TRAIN_BOTTOM + 4, "checkpoints, in the order they began"),
        people=people_steps(points),
        progress=progress,
        dots=dots,
    )
