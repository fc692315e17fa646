"""The registries an extension touches agree with each other (docs/architecture.md, "Where to add").

A widget, an action kind, a report format or an agent protocol is named in several files; one
left out fails silently (an act.* kind with no evidence rule marks every attempt that uses it
no-input). Each test here names the pair of registries that must agree. Only the report
formats use the database: they render a real report."""

import copy
import importlib
import inspect
import pkgutil
import re
import typing
from pathlib import Path

import numpy as np
import pytest

from annotation.agents import protocols
from annotation.agents.protocols import PROTOCOLS, Protocol
from annotation.live.evidence import _Checks, _Raw
from annotation.live.frames import KINDS
from annotation.models import Study
from annotation.reporting import render as report_render
from annotation.reporting.reports import study_report
from puzzles.layout import hold_page
from puzzles.registry import get_type, type_names
from puzzles.types.contract import Widget

ROOT = Path(__file__).resolve().parent.parent
ARENA_JS = ROOT / "static" / "arena"
EVENTS_DOC = ROOT / "docs" / "events.md"

WIDGETS = frozenset(typing.get_args(Widget))
ACTION_KINDS = frozenset(kind for kind in KINDS if kind.startswith("act."))


def js_source(name: str) -> str:
    return (ARENA_JS / name).read_text(encoding="utf-8")


def js_object_keys(source: str, opening: str) -> set[str]:
    """The keys of the object literal that starts at `opening` (`{ a, b: c }` or one key a line)."""
    start = source.index(opening) + len(opening)
    body = re.sub(r'"[^"]*"', '""', source[start : source.index("}", start)])  # values may hold commas
    return {re.split(r"\s*:", entry.strip())[0] for entry in body.split(",") if entry.strip()}


def evidence_rules() -> set[str]:
    """The action kinds input_evidence has a rule for (any layout: the rules are per kind)."""
    return set(_Checks(_Raw([]), hold_page(steps=1)).by_kind)


# --- action kinds: frames.KINDS, evidence rules, the page, docs/events.md ----------------------


def test_every_action_kind_has_an_evidence_rule():
    missing = ACTION_KINDS - evidence_rules()
    # Without a rule every attempt that uses the kind is marked no-input and leaves Pass@1.
    assert not missing, f"act.* kinds with no rule in annotation/live/evidence.py: {sorted(missing)}"


def test_every_evidence_rule_is_an_action_kind():
    stray = evidence_rules() - ACTION_KINDS
    assert not stray, f"evidence rules for kinds annotation/live/frames.py (KINDS) refuses: {sorted(stray)}"


def test_every_action_the_page_emits_is_a_kind():
    emitted = set()
    for script in ARENA_JS.glob("*.js"):
        emitted |= set(re.findall(r"\bemit\(\"([\w.]+)\"", script.read_text(encoding="utf-8")))
    assert emitted, "no ctx.emit(...) found in static/arena: the pattern needs updating"
    assert emitted <= ACTION_KINDS, f"the page emits kinds frames.KINDS refuses: {sorted(emitted - ACTION_KINDS)}"


# One name per action: the name the page emits is the name stored, scored and read by the
# reducers. A second spelling ("click" for act.click, built back with a prefix) is a red test.
REDUCER_NAME = re.compile(r'(?:_of\(actions, |\.kind == )"([\w.]+)"')


def test_the_page_names_an_action_as_it_is_logged():
    for script in ARENA_JS.glob("*.js"):
        built = re.findall(r"`act\.\$\{", script.read_text(encoding="utf-8"))
        assert not built, f"static/arena/{script.name} builds an action's name from a second one"


def test_the_reducers_read_an_action_by_its_logged_name():
    read = set()
    for module in (ROOT / "puzzles" / "types").glob("*.py"):
        read |= set(REDUCER_NAME.findall(module.read_text(encoding="utf-8")))
    assert read, "no reducer reads an action in puzzles/types: the pattern needs updating"
    assert read <= ACTION_KINDS, f"reducers read actions by names frames.KINDS lacks: {sorted(read - ACTION_KINDS)}"


def test_every_event_kind_is_documented():
    rows = [line for line in EVENTS_DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    documented = {kind for row in rows for kind in re.findall(r"`([\w.]+)`", row.split("|")[1])}
    assert not set(KINDS) - documented, f"kinds missing from docs/events.md: {sorted(set(KINDS) - documented)}"


# --- widgets: the Widget literal, widgets.js, practice rules, the types ------------------------


def test_every_widget_has_a_page_widget_and_the_reverse():
    exported = js_object_keys(js_source("widgets.js"), "export const widgets = {")
    assert exported == WIDGETS, (
        f"puzzles/types/contract.py Widget and static/arena/widgets.js `widgets` differ: "
        f"no export for {sorted(WIDGETS - exported)}, not in Widget: {sorted(exported - WIDGETS)}"
    )


def test_every_widget_has_a_practice_rule():
    play = js_source("play.js")
    rules = js_object_keys(play, "const RULES = {")
    assert not WIDGETS - rules, f"widgets with no practice rule in static/arena/play.js: {sorted(WIDGETS - rules)}"
    variants = set(re.findall(r"RULES\.(\w+)", play))  # rules a widget picks by its page data
    assert rules <= WIDGETS | variants, f"practice rules no widget shows: {sorted(rules - WIDGETS - variants)}"


def test_every_widget_is_in_the_page_data_doc():
    row = next(line for line in EVENTS_DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `widget` |"))
    assert set(re.findall(r"`(\w+)`", row)) >= WIDGETS, "docs/events.md: the `widget` row lists every widget"


@pytest.mark.parametrize("name", type_names())
def test_every_type_uses_a_known_widget(name):
    assert get_type(name).widget in WIDGETS


# --- report formats: FORMATS and the renderers ------------------------------------------------


@pytest.fixture
def report(db) -> dict:
    """The report of a study with no attempts yet, as study_report gives it (its real shape)."""
    return study_report(study=Study.objects.create(name="Empty", puzzles_per_annotator=1))


@pytest.mark.parametrize("fmt", list(report_render.FORMATS))
def test_every_format_has_a_renderer(fmt, report):
    assert report_render.FORMATS[fmt].count("/") == 1, "FORMATS maps a format to its media type"
    assert report_render.render(copy.deepcopy(report), fmt)


def test_every_renderer_is_a_format(report):
    renderers = {name: f for name, f in vars(report_render).items() if name.startswith("to_") and callable(f)}
    rendered = [report_render.render(copy.deepcopy(report), fmt) for fmt in report_render.FORMATS]
    unused = sorted(name for name, f in renderers.items() if f(copy.deepcopy(report)) not in rendered)
    assert not unused, f"renderers in annotation/reporting/render.py no FORMAT reaches: {unused}"


# --- agent protocols: the modules and PROTOCOLS -----------------------------------------------


def protocol_classes() -> set[type]:
    """Every Protocol subclass defined in a module of annotation/agents/protocols/."""
    found = set()
    for info in pkgutil.iter_modules(protocols.__path__):
        module = importlib.import_module(f"{protocols.__name__}.{info.name}")
        found |= {
            value
            for value in vars(module).values()
            if inspect.isclass(value) and issubclass(value, Protocol) and value is not Protocol
        }
    return found


def test_every_protocol_is_named_in_protocols():
    unnamed = protocol_classes() - set(PROTOCOLS.values())
    assert not unnamed, f"protocols missing from PROTOCOLS: {sorted(c.__name__ for c in unnamed)}"
    assert all(name == cls.name for name, cls in PROTOCOLS.items())


# --- chance rates: every type states its blind guess and what it scores ------------------------


@pytest.mark.parametrize("name", type_names())
def test_every_type_has_a_chance_rate(name):
    """Each type's chance hooks (puzzles/types/base.py) are its own, not the base's, and agree:
    a rate in 0..1 with a guess the verifier reads, or None for both (nothing to guess)."""
    puzzle_type = get_type(name)
    assert puzzle_type.chance_rule.strip(), f"{name} states no chance_rule"
    puzzle = puzzle_type.generate(np.random.default_rng(7))
    rate = puzzle_type.chance_rate(puzzle.truth, puzzle.masks)
    guess = puzzle_type.random_answer(puzzle.public, np.random.default_rng(7))
    if rate is None:
        assert guess is None and "not chance-able" in puzzle_type.chance_rule
        return
    assert 0.0 <= rate <= 1.0
    verdict = puzzle_type.verify(puzzle.truth, guess, puzzle.masks)
    assert not verdict.reason.startswith("malformed"), f"{name}'s guess {guess!r}: {verdict.reason}"
