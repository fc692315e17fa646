"""Secrets a development machine makes once and keeps in VAR_DIR (DEBUG only): the site's signing
key and the puzzle bank's secret. Never a constant in the source: anyone with the code would hold it."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def kept_secret(path: Path, *, name: str, usable: Callable[[str], bool]) -> str:
    """The secret kept at path, made on first use (owner-only permissions); name is its variable."""
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _create(path, secrets.token_urlsafe(48))
    secret = path.read_text(encoding="utf-8").strip()
    if not usable(secret):
        raise ImproperlyConfigured(f"{path} does not hold a usable {name}; delete it to have a new one made")
    return secret


def test_run_secret(name: str) -> str | None:
    """A throwaway secret when pytest runs this process, else None. Exported under name, so the
    processes the tests start (page servers, service commands) inherit it with the environment."""
    # Both: a program started from a test (a page server) has the variable but not the module.
    if "PYTEST_VERSION" not in os.environ or "_pytest" not in sys.modules:
        return None
    os.environ[name] = secret = f"test-only-{secrets.token_urlsafe(40)}"
    return secret


def how_to_make(name: str) -> str:
    """The hint every refusal of a missing or unfit secret ends with."""
    return f'Generate one with: python -c "import secrets; print(secrets.token_urlsafe(48))" and set {name}.'


def _create(path: Path, secret: str) -> None:
    # Written aside and linked into place: a process starting at the same moment either sees no
    # file or the whole secret, and the loser of the race reads the winner's.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(secret + "\n")
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass
    finally:
        temporary.unlink()
