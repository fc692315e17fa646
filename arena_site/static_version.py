"""The version in every static URL (/static/<version>/arena/play.js): a digest of the files.

Scripts are ES modules that import each other by relative path ("./stage.js"), so a version in
the query string would not reach the modules they import; a version in the path does. Any
change to any file gives every URL a new path, so browsers may keep them for good (asgi.py), and
a page served after a deploy never runs a cached script of the release before beside a new one.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable, Iterator
from pathlib import Path


def app_static_folders(apps: Iterable[str]) -> Iterator[Path]:
    """The static/ folder of each installed app that has one (the admin's, today), found without
    importing the apps: settings are still being read."""
    for app in apps:
        spec = importlib.util.find_spec(app)
        for location in (spec.submodule_search_locations or []) if spec else []:
            if (Path(location) / "static").is_dir():
                yield Path(location) / "static"


def static_version(folders: Iterable[Path]) -> str:
    """12 hex digits over every file's path and bytes under the folders."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
