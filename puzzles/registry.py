"""The puzzle types, discovered from the modules of puzzles/types/.

Adding a type means adding one module there that defines a PuzzleType subclass with a name.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

from puzzles import types as types_package
from puzzles.types.base import PuzzleType

_SUPPORT_MODULES = {"base", "contract", "kinds"}


class UnknownPuzzleType(LookupError):
    pass


class DuplicatePuzzleType(RuntimeError):
    pass


class Registry:
    def __init__(self) -> None:
        self._by_name: dict[str, PuzzleType[Any]] = {}

    def register(self, puzzle_type: PuzzleType[Any]) -> None:
        name = puzzle_type.name
        if name in self._by_name or puzzle_type.slug() in {t.slug() for t in self._by_name.values()}:
            raise DuplicatePuzzleType(f"puzzle type {name!r} is registered twice")
        self._by_name[name] = puzzle_type

    def get(self, name: str) -> PuzzleType[Any]:
        """Look a type up by CaptchaArena name ("Geometry_Click") or slug ("geometry-click")."""
        found = self._by_name.get(name)
        if found is None:
            found = next((t for t in self._by_name.values() if t.slug() == name.lower()), None)
        if found is None:
            raise UnknownPuzzleType(f"unknown puzzle type {name!r}; known: {', '.join(self.names())}")
        return found

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def resolve(self, names: list[str] | None) -> list[str]:
        """The canonical names of the types asked for (names or slugs), or every name when none are."""
        return [self.get(name).name for name in names] if names else self.names()

    def all(self) -> list[PuzzleType[Any]]:
        return [self._by_name[name] for name in self.names()]

    def __contains__(self, name: str) -> bool:
        try:
            self.get(name)
        except UnknownPuzzleType:
            return False
        return True


def _discover(registry: Registry) -> None:
    for module_info in pkgutil.iter_modules(types_package.__path__):
        if module_info.name in _SUPPORT_MODULES or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{types_package.__name__}.{module_info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, PuzzleType)
                and value.__module__ == module.__name__
                and "name" in vars(value)
            ):
                registry.register(value())


@cache
def registry() -> Registry:
    found = Registry()
    _discover(found)
    return found


def get_type(name: str) -> PuzzleType[Any]:
    return registry().get(name)


def type_names(names: list[str] | None = None) -> list[str]:
    """The canonical names of the types asked for, or of every type when none are."""
    return registry().resolve(names)
