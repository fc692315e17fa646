"""The puzzle bank's secret: what every generated puzzle of a deployment derives from.

A puzzle is a pure function of (type, split, index, bank secret). With a constant in the source
anyone holding the code could rebuild the bank offline and look each served image's truth up, so
the secret comes from the environment (PUZZLE_BANK_SECRET) and is required outside DEBUG. With
DEBUG on and none set, one is generated once and kept in VAR_DIR, readable by its owner alone; a
test run makes a throwaway one.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from .kept_secret import how_to_make, kept_secret, test_run_secret

ENV = "PUZZLE_BANK_SECRET"
MIN_LENGTH = 32
MIN_DISTINCT = 10  # a 32-character run of a few repeated characters is not a secret
SECRET_FILE = "bank-secret"
# The old public default seed and the placeholders people paste: anyone can guess them.
KNOWN = {"20260"}
PLACEHOLDER_WORDS = ("change", "example", "placeholder", "insecure", "dummy", "default", "replace", "dev-only")
_RETIRED_ENV = "PUZZLE_BANK_SEED"


def bank_secret(*, debug: bool, var_dir: Path, base_dir: Path) -> str:
    """The deployment's secret, or ImproperlyConfigured naming PUZZLE_BANK_SECRET and what is wrong."""
    if os.environ.get(_RETIRED_ENV):
        # Silently ignoring it would quietly switch a deployment to a new bank.
        raise ImproperlyConfigured(
            f"{_RETIRED_ENV} is no longer read: puzzles derive from {ENV} (at least {MIN_LENGTH} random characters)"
        )
    secret = os.environ.get(ENV, "").strip()
    if secret:
        problem = weakness(secret, known=_env_example_values(base_dir))
        if problem and not debug:
            raise ImproperlyConfigured(f"{ENV} is refused: {problem}. {_HOW}")
        return secret
    if debug:
        return _kept_secret(var_dir)
    if (throwaway := test_run_secret(ENV)) is not None:  # a throwaway bank per test run
        return throwaway
    raise ImproperlyConfigured(f"{ENV} must be set when DEBUG is false. {_HOW}")


_HOW = how_to_make(ENV)


def weakness(secret: str, *, known: Collection[str] = ()) -> str | None:
    """Why a secret is unfit for a deployment, or None."""
    if secret in KNOWN or secret in known:
        return "it is a known value (a default, or a value from .env.example)"
    lowered = secret.lower()
    if any(word in lowered for word in PLACEHOLDER_WORDS):
        return "it looks like a placeholder"
    if len(secret) < MIN_LENGTH:
        return f"it has {len(secret)} characters, fewer than {MIN_LENGTH}"
    if len(set(secret)) < MIN_DISTINCT:
        return f"it repeats fewer than {MIN_DISTINCT} distinct characters"
    return None


def _env_example_values(base_dir: Path) -> set[str]:
    """Every value in the repository's .env.example: published with the code, so never a secret."""
    try:
        lines = (base_dir / ".env.example").read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    values = set()
    for line in lines:
        name, sep, value = line.strip().partition("=")
        if sep and not name.startswith("#"):
            value = value.strip().strip("'\"")
            if value:
                values.add(value)
    return values


def _kept_secret(var_dir: Path) -> str:
    """DEBUG only: the secret kept in var_dir, made on first use."""
    return kept_secret(var_dir / SECRET_FILE, name=ENV, usable=lambda secret: len(secret) >= MIN_LENGTH)
