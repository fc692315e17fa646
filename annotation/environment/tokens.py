"""Trainers' keys to the environment: printed once, kept as a sha256, revocable by staff."""

from __future__ import annotations

import hashlib
import secrets

from django.db import IntegrityError
from django.db.models import Count

from annotation.models import EnvToken, Slot
from puzzles.models import Puzzle

NAME_MAX = 100  # EnvToken.name's max_length
SESSIONS_DEFAULT, SESSIONS_MAX = 4, 1000  # a token's sessions open at once on one server
KEY_BYTES = 24  # token_urlsafe: 32 characters of [A-Za-z0-9_-], safe in a URL path


class TokenError(ValueError):
    """A token that cannot be made as asked; the message says why."""


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def token_create(
    *, name: str, datasets: list[str], splits: list[str] | None = None, max_sessions: int = SESSIONS_DEFAULT
) -> tuple[EnvToken, str]:
    """A new token for the client `name` serving `splits` (train unless given) of `datasets`, with
    at most `max_sessions` sessions open at once on a server; returns it and its key (shown once)."""
    splits = sorted(set(splits or ["train"]))
    if not 1 <= max_sessions <= SESSIONS_MAX:
        raise TokenError(f"a token's sessions are 1 to {SESSIONS_MAX}, not {max_sessions}")
    if not 0 < len(name) <= NAME_MAX or ":" in name:
        # It names the client's runs, "env NAME: CHECKPOINT": with a colon two clients' names could meet.
        raise TokenError(f"a token's name is 1 to {NAME_MAX} characters, with no ':' (not {name!r})")
    known = set(Puzzle.objects.filter(dataset__in=datasets).values_list("dataset", flat=True).distinct())
    unknown = sorted(set(datasets) - known)
    if not datasets or unknown:
        raise TokenError(f"no puzzles in dataset(s) {', '.join(unknown)}" if unknown else "name at least one dataset")
    if not Puzzle.objects.filter(dataset__in=datasets, split__in=splits).exists():
        raise TokenError(f"no puzzles of split {', '.join(splits)} in {', '.join(sorted(set(datasets)))}")
    key = secrets.token_urlsafe(KEY_BYTES)
    try:
        token = EnvToken.objects.create(
            name=name,
            key_hash=key_hash(key),
            datasets=sorted(set(datasets)),
            splits=splits,
            max_sessions=max_sessions,
        )
    except IntegrityError:
        raise TokenError(f"a token named {name!r} exists already") from None
    return token, key


def studied_puzzles(token: EnvToken) -> dict[str, int]:
    """Of the puzzles this token reaches, how many each study uses: training on them makes the
    study's agents-beside-people comparisons contaminated (docs/environment.md)."""
    rows = (
        Slot.objects.filter(puzzle__dataset__in=token.datasets, puzzle__split__in=token.splits)
        .values("study__name")
        .annotate(puzzles=Count("puzzle", distinct=True))
    )
    return {row["study__name"]: row["puzzles"] for row in rows}


def token_for(key: str) -> EnvToken | None:
    """The live token with this key, or None (unknown or revoked)."""
    return EnvToken.objects.filter(key_hash=key_hash(key), revoked_at__isnull=True).first()


def token_live(pk: int) -> EnvToken | None:
    """The token as stored now, or None once revoked: a session reads it again at each reset."""
    return EnvToken.objects.filter(pk=pk, revoked_at__isnull=True).first()


def tokens_revoked(pks: list[int]) -> set[int]:
    """Of these tokens, those revoked (or deleted): their open sessions are closed."""
    live = set(EnvToken.objects.filter(pk__in=pks, revoked_at__isnull=True).values_list("pk", flat=True))
    return set(pks) - live
