"""Trainers' keys to the environment: printed once, kept as a sha256, revocable by staff."""

from __future__ import annotations

import hashlib
import secrets

from django.db import IntegrityError

from annotation.models import EnvToken
from puzzles.models import Puzzle

NAME_MAX = 100  # EnvToken.name's max_length
KEY_BYTES = 24  # token_urlsafe: 32 characters of [A-Za-z0-9_-], safe in a URL path


class TokenError(ValueError):
    """A token that cannot be made as asked; the message says why."""


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def token_create(*, name: str, datasets: list[str]) -> tuple[EnvToken, str]:
    """A new token for the client `name` serving `datasets`; returns it and its key (shown once)."""
    if not 0 < len(name) <= NAME_MAX or ":" in name:
        # It names the client's runs, "env NAME: CHECKPOINT": with a colon two clients' names could meet.
        raise TokenError(f"a token's name is 1 to {NAME_MAX} characters, with no ':' (not {name!r})")
    known = set(Puzzle.objects.filter(dataset__in=datasets).values_list("dataset", flat=True).distinct())
    unknown = sorted(set(datasets) - known)
    if not datasets or unknown:
        raise TokenError(f"no puzzles in dataset(s) {', '.join(unknown)}" if unknown else "name at least one dataset")
    key = secrets.token_urlsafe(KEY_BYTES)
    try:
        token = EnvToken.objects.create(name=name, key_hash=key_hash(key), datasets=sorted(set(datasets)))
    except IntegrityError:
        raise TokenError(f"a token named {name!r} exists already") from None
    return token, key


def token_for(key: str) -> EnvToken | None:
    """The live token with this key, or None (unknown or revoked)."""
    return EnvToken.objects.filter(key_hash=key_hash(key), revoked_at__isnull=True).first()


def token_live(pk: int) -> EnvToken | None:
    """The token as stored now, or None once revoked: a session reads it again at each reset."""
    return EnvToken.objects.filter(pk=pk, revoked_at__isnull=True).first()
