"""Hand-made study reports for the renderers' tests: the fields a test names, every other field
blank as the report's types declare it (report_types.py), so that a report built here has the
shape study_report gives."""

import typing

from annotation.reporting.report_types import StudyReport


def blank_value(hint: typing.Any) -> typing.Any:
    """A field's value when nothing is known: None where allowed, else 0, "", False, [] or {}."""
    if type(None) in typing.get_args(hint):
        return None
    if typing.is_typeddict(hint):
        return complete({}, hint)
    origin = typing.get_origin(hint) or hint
    return {int: 0, float: 0.0, str: "", bool: False, list: [], dict: {}}[origin]


def filled(value: typing.Any, hint: typing.Any) -> typing.Any:
    """A value given by a test, with any report sections inside it completed."""
    if value is None or typing.is_typeddict(hint):
        return value if value is None else complete(value, hint)
    inner = [arg for arg in typing.get_args(hint) if typing.is_typeddict(arg)]
    if not inner:
        return value
    if typing.get_origin(hint) is list:
        return [complete(item, inner[0]) for item in value]
    if typing.get_origin(hint) is dict:
        return {key: complete(item, inner[0]) for key, item in value.items()}
    return complete(value, inner[0])  # a section that may be None


def complete(partial: dict, shape: typing.Any = StudyReport) -> dict:
    """The partial report (or section) with every field its shape declares, in declared order."""
    hints = typing.get_type_hints(shape)
    unknown = set(partial) - set(hints)
    assert not unknown, f"{shape.__name__} declares no {sorted(unknown)}"
    return {key: filled(partial[key], hint) if key in partial else blank_value(hint) for key, hint in hints.items()}
