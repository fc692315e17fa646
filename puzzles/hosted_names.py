"""Names of hosted families: a type `<benchmark>:<Family>` is a family of a benchmark served by its
own server (docs/hosted.md), not one of ours. Pure: the bank never reads the benchmark table."""

from __future__ import annotations

import re

SEPARATOR = ":"
BENCHMARK_NAME = re.compile(r"[a-z][a-z0-9-]{0,23}")
FAMILY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]{0,38}")


def hosted_type(benchmark: str, family: str) -> str:
    """The Puzzle.type of a family of a hosted benchmark; ValueError for a name that cannot be one."""
    if not BENCHMARK_NAME.fullmatch(benchmark):
        raise ValueError(f"benchmark name {benchmark!r}: use 1-24 lowercase letters, digits or hyphens")
    if not FAMILY_NAME.fullmatch(family):
        raise ValueError(f"family name {family!r}: use 1-39 letters, digits or underscores")
    return f"{benchmark}{SEPARATOR}{family}"


def split_hosted_type(name: str) -> tuple[str, str] | None:
    """(benchmark, family) of a hosted type name; None for one of our own types."""
    benchmark, separator, family = name.partition(SEPARATOR)
    if not separator or not BENCHMARK_NAME.fullmatch(benchmark) or not FAMILY_NAME.fullmatch(family):
        return None
    return benchmark, family


def hosted_dataset(benchmark: str) -> str:
    """The dataset a benchmark's drawn puzzles belong to (as import:<name> names an import)."""
    return f"hosted:{benchmark}"
