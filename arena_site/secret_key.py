"""The site's SECRET_KEY: it signs sessions, CSRF tokens and resume links, so whoever holds it can
sign anyone in. Required outside DEBUG and refused there when Django's own deploy check calls it
weak; with DEBUG on and none set, one is made once and kept in VAR_DIR (as the bank's secret is);
a test run makes a throwaway one. A key that was ever published signs nothing, DEBUG or not.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.checks.security import base as deploy_check
from django.core.exceptions import ImproperlyConfigured

from .kept_secret import how_to_make, kept_secret, test_run_secret

ENV = "SECRET_KEY"
KEY_FILE = "secret-key"
# The old development key of settings.py and the old docker-compose default: anyone can sign with them.
PUBLISHED = frozenset({"dev-only-insecure-key-do-not-deploy", "change-me-in-production"})
_HOW = how_to_make(ENV)


def secret_key(*, debug: bool, var_dir: Path) -> str:
    """The deployment's key, or ImproperlyConfigured naming SECRET_KEY and what is wrong."""
    key = os.environ.get(ENV, "")
    if key:
        return _checked(key, debug=debug)
    if debug:
        return kept_secret(var_dir / KEY_FILE, name=ENV, usable=strong)
    if (throwaway := test_run_secret(ENV)) is not None:
        return throwaway
    raise ImproperlyConfigured(f"{ENV} must be set when DEBUG is false. {_HOW}")


def strong(key: str) -> bool:
    """Whether `manage.py check --deploy` accepts the key (security.W009): Django's rule, not ours."""
    return deploy_check._check_secret_key(key)


def _checked(key: str, *, debug: bool) -> str:
    if key in PUBLISHED:
        raise ImproperlyConfigured(f"{ENV} is a published development key; set a random one of your own. {_HOW}")
    if not debug and not strong(key):
        raise ImproperlyConfigured(
            f"{ENV} is refused: Django's deploy check calls it weak ({len(key)} characters, "
            f"{len(set(key))} distinct; it needs at least "
            f"{deploy_check.SECRET_KEY_MIN_LENGTH} characters, {deploy_check.SECRET_KEY_MIN_UNIQUE_CHARACTERS} "
            f"of them distinct, and no {deploy_check.SECRET_KEY_INSECURE_PREFIX!r} prefix). {_HOW}"
        )
    return key
