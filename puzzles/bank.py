"""Deterministic puzzle identity: a puzzle is a pure function of (type, split, index, bank seed)."""

import zlib

import numpy as np

from puzzles.registry import get_type
from puzzles.types.base import Generated

# Published split sizes per type.
SPLIT_SIZES = {"train": 2100, "val": 200, "test": 200}
_SPLIT_CODES = {"train": 1, "val": 2, "test": 3}


class UnknownSplit(ValueError):
    pass


def split_code(split: str) -> int:
    try:
        return _SPLIT_CODES[split]
    except KeyError:
        raise UnknownSplit(f"unknown split {split!r}; use one of {', '.join(SPLIT_SIZES)}") from None


def puzzle_rng(type_name: str, split: str, index: int, bank_seed: int) -> np.random.Generator:
    # crc32, not hash(): Python salts str hashes per process, which would break determinism.
    return np.random.default_rng([bank_seed, zlib.crc32(type_name.encode()), split_code(split), index])


def generate_puzzle(type_name: str, split: str, index: int, bank_seed: int) -> Generated:
    return get_type(type_name).generate(puzzle_rng(type_name, split, index, bank_seed))
