"""The puzzle contract (puzzles/types/contract.py) against what the types really generate.

mypy checks the code that reads public and truth; these tests check that what is generated and
stored (after a JSON round trip) has the shapes the TypedDicts declare.
"""

import json
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from puzzles.bank import generate_puzzle
from puzzles.registry import registry
from puzzles.types.base import PuzzleType
from puzzles.types.contract import CuKind, PublicData

TYPES = [t.name for t in registry().all()]


def shape_problems(value: Any, hint: Any, where: str = "", *, open_keys: bool = False) -> list[str]:
    """Why `value` (plain JSON) does not fit the type `hint`; empty when it does. A TypedDict is
    closed (no keys beyond its own) unless open_keys; nested ones always are."""
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not an object"]
        fields = get_type_hints(hint)
        problems = [f"{where}.{key}: missing" for key in sorted(hint.__required_keys__ - value.keys())]
        if not open_keys:
            problems += [f"{where}.{key}: not in {hint.__name__}" for key in sorted(value.keys() - fields.keys())]
        for key in sorted(value.keys() & fields.keys()):
            problems += shape_problems(value[key], fields[key], f"{where}.{key}")
        return problems
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return []
    if origin in (Union, types.UnionType):
        fits = any(not shape_problems(value, arg, where) for arg in args)
        return [] if fits else [f"{where}: {value!r} is not {hint}"]
    if origin is Literal:
        return [] if value in args else [f"{where}: {value!r} is not one of {args}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r} is not a list"]
        return [p for i, item in enumerate(value) for p in shape_problems(item, args[0], f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not an object"]
        return [p for k, v in value.items() for p in shape_problems(v, args[1], f"{where}[{k!r}]")]
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if hint is float:  # JSON numbers: an int is a float here, as for mypy
        fits = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif hint is int:
        fits = isinstance(value, int) and not isinstance(value, bool)
    else:
        fits = isinstance(value, hint)
    return [] if fits else [f"{where}: {value!r} is not {getattr(hint, '__name__', hint)}"]


def truth_contract(puzzle_type: PuzzleType[Any]) -> Any:
    """The truth TypedDict a type's kind fixes, from the PuzzleType[...] parameters of its bases."""
    for cls in type(puzzle_type).__mro__:
        for base in cls.__dict__.get("__orig_bases__", ()):
            found = next((arg for arg in get_args(base) if is_typeddict(arg)), None)
            if found is not None:
                return found
    raise AssertionError(f"{type(puzzle_type).__name__} fixes no truth TypedDict")


def stored(name: str, index: int = 0) -> tuple[PuzzleType[Any], dict[str, Any], dict[str, Any]]:
    """A type, and one of its puzzles' public and truth as the database holds them (JSON)."""
    generated = generate_puzzle(name, "test", index, 7)
    public = json.loads(json.dumps(generated.public))
    truth = json.loads(json.dumps(generated.truth))
    return registry().get(name), public, truth


@pytest.mark.parametrize("name", TYPES)
def test_generated_public_has_exactly_the_contracts_keys(name):
    _, public, _ = stored(name)
    assert public.keys() >= PublicData.__required_keys__
    assert shape_problems(public, PublicData, "public") == []


@pytest.mark.parametrize("name", TYPES)
def test_generated_truth_has_the_kinds_keys(name):
    puzzle_type, _, truth = stored(name)
    contract = truth_contract(puzzle_type)
    assert truth.keys() >= contract.__required_keys__, contract.__name__
    # Types keep more than their kind reads (the question, what was drawn): open at the top.
    assert shape_problems(truth, contract, "truth", open_keys=True) == []


@pytest.mark.parametrize("name", TYPES)
def test_every_type_has_the_declared_hooks(name):
    puzzle_type, _, truth = stored(name)
    kind, answer = puzzle_type.cu_answer(truth)
    assert kind in get_args(CuKind)
    json.dumps(answer)
    progress = puzzle_type.hold_progress(truth, 500.0)
    if puzzle_type.widget == "hold":
        assert progress is not None and 0.0 < progress <= 1.0
    else:
        assert progress is None


def test_the_base_hooks_say_what_a_type_lacks():
    bare: PuzzleType[Any] = PuzzleType()
    assert bare.hold_progress({}, 1000.0) is None
    with pytest.raises(NotImplementedError):
        bare.cu_answer({})


def test_the_shape_check_finds_problems():
    public = {"instruction": "x", "image": "image", "image_size": [3, "4"], "secret": 1}
    assert shape_problems(public, PublicData, "public") == [
        "public.secret: not in PublicData",
        "public.image_size[1]: '4' is not int",
    ]
    assert shape_problems({"image": "i"}, PublicData, "p")[:2] == ["p.image_size: missing", "p.instruction: missing"]
