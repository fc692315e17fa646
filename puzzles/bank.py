"""Deterministic puzzle identity: a puzzle is a pure function of (type, split, index, bank key).

A bank key derives from the deployment's secret (settings.PUZZLE_BANK_SECRET), never from a
constant in the source: whoever has the code but not the secret cannot rebuild the bank. An
explicit integer seed (tests, benches, `puzzles generate --seed`) selects another bank of the same
deployment; it is mixed with the secret, never used instead of it.
"""

from __future__ import annotations

import hashlib
import hmac
import zlib
from dataclasses import dataclass

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


@dataclass(frozen=True)
class BankKey:
    """One bank: the keyed material its puzzles and their served images derive from, and the
    `Puzzle.dataset` label its puzzles are stored under (which reveals nothing of the secret)."""

    material: bytes
    label: str

    def rng(self, *parts: str | int) -> np.random.Generator:
        """A generator keyed by this bank and the parts, the same in every process and on every run."""
        digest = hmac.new(self.material, "\x1f".join(map(str, parts)).encode(), hashlib.sha256).digest()
        return np.random.default_rng(list(np.frombuffer(digest, dtype="<u4").tolist()))


def _keyed(secret: str, purpose: str) -> bytes:
    return hmac.new(secret.encode(), purpose.encode(), hashlib.sha256).digest()


def bank_key(seed: int | None = None, *, secret: str | None = None) -> BankKey:
    """The deployment's bank (seed None), or the bank an explicit seed selects within it."""
    if secret is None:
        from django.conf import settings  # read late: the pure parts of the bank need no Django

        secret = str(settings.PUZZLE_BANK_SECRET)
    material = _keyed(secret, "puzzle-bank" if seed is None else f"puzzle-bank/seed:{seed}")
    # An explicit seed keeps its label (tests and benches find their puzzles by it); the
    # deployment's own bank is named by a keyed fingerprint, so a new secret is a new dataset.
    label = f"generated:{seed}" if seed is not None else f"generated:key-{_keyed(secret, 'bank-label').hex()[:12]}"
    return BankKey(material, label)


def as_bank_key(bank: BankKey | int | None) -> BankKey:
    return bank if isinstance(bank, BankKey) else bank_key(bank)


def puzzle_rng(type_name: str, split: str, index: int, bank: BankKey) -> np.random.Generator:
    # crc32, not hash(): Python salts str hashes per process, which would break determinism.
    return bank.rng("puzzle", zlib.crc32(type_name.encode()), split_code(split), index)


def generate_puzzle(type_name: str, split: str, index: int, bank: BankKey | int | None = None) -> Generated:
    """The puzzle at (type, split, index) of a bank: the deployment's, or an explicit seed's within it."""
    return get_type(type_name).generate(puzzle_rng(type_name, split, index, as_bank_key(bank)))
