"""Folders someone else made, read without leaving them; exports written without leaving theirs.

A dataset to import or an agent's output folder is untrusted: a symbolic link in it could put the
site's own files (its secrets) on a staff page or into an export, a name like `../../x` could write
outside the export folder, and a huge or deeply nested file could take the worker's memory or stack.
So every importer and exporter goes through here:

- a file is read only if it is a regular file whose every path component under the root is not a
  symbolic link (nothing followed, not even a link that points back inside), up to a size cap;
- JSON is parsed only up to a nesting depth;
- an id that becomes a file name has no separator, no `..`, no leading `.`, no control character;
- a path an export writes resolves inside the export's root.

Each refusal is a `Refused` naming the file and why, so the importer can name the entry and go on.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

JSON_MAX_BYTES = 64 * 1024 * 1024  # the published ground_truth.json files are a few MB at most
IMAGE_MAX_BYTES = 32 * 1024 * 1024  # the published images are well under 1 MB each
JSON_MAX_DEPTH = 32  # the published entries nest 4 deep; far more is a crafted file
NAME_MAX_CHARS = 200


class Refused(ValueError):
    """A file or name that is not read or written, with why."""


def regular_file(root: Path, path: Path) -> Path:
    """The path, refused unless it is a regular file under root reached through no symbolic link."""
    _no_link_on_the_way(root, path)
    if not stat.S_ISREG(_lstat(path).st_mode):
        raise Refused(f"{_shown(root, path)} is not a regular file")
    return path


def read_bytes(root: Path, path: Path, *, limit: int) -> bytes:
    """A regular file's bytes (regular_file's rules), refused past `limit` bytes before reading."""
    regular_file(root, path)
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(descriptor, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size > limit:
            raise Refused(f"{_shown(root, path)} is {size:,} bytes, over the {limit:,} read")
        data = file.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise Refused(f"{_shown(root, path)} is over the {limit:,} bytes read")
    return data


def read_json(root: Path, path: Path, *, limit: int = JSON_MAX_BYTES, depth: int = JSON_MAX_DEPTH) -> Any:
    """A JSON file (read_bytes' rules), refused when it does not parse or nests deeper than `depth`."""
    data = read_bytes(root, path, limit=limit)
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise Refused(f"{_shown(root, path)} is not JSON: {str(error)[:120]}") from None
    if nesting(value) > depth:
        raise Refused(f"{_shown(root, path)} nests deeper than {depth} levels")
    return value


def nesting(value: Any) -> int:
    """How deep lists and objects nest in a parsed JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest


def subfolders(root: Path, folder: Path) -> list[Path]:
    """The real folders in a folder, sorted; symbolic links to folders are left out."""
    regular_folder(root, folder)
    return sorted(p for p in folder.iterdir() if stat.S_ISDIR(_lstat(p).st_mode))


def regular_folder(root: Path, folder: Path) -> Path:
    """The folder, refused unless it is one under root reached through no symbolic link."""
    _no_link_on_the_way(root, folder)
    if not stat.S_ISDIR(_lstat(folder).st_mode):
        raise Refused(f"{_shown(root, folder)} is not a folder")
    return folder


_NAME_RULES = (
    (lambda name: len(name) > NAME_MAX_CHARS, "is too long"),
    (lambda name: "/" in name or "\\" in name, "holds a path separator"),
    (lambda name: ".." in name, "holds '..'"),
    (lambda name: name.startswith("."), "starts with '.'"),
    (lambda name: not name.isprintable(), "holds a control character"),
)


def safe_name(value: object, *, what: str = "id") -> str:
    """A name that can become one file name: no separator, `..`, leading `.`, NUL or control character."""
    if not isinstance(value, str) or not value:
        raise Refused(f"{what} {value!r} is not a name")
    for broken, why in _NAME_RULES:
        if broken(value):
            raise Refused(f"{what} {value[:60]!r} {why}")
    return value


def output_path(root: Path, *parts: str) -> Path:
    """Where an export writes root/parts..., refused unless it resolves inside root and is no link."""
    target = root.joinpath(*parts)
    if target.is_symlink():
        raise Refused(f"{_shown(root, target)} is a symbolic link, not written through")
    resolved_root = root.resolve()
    if resolved_root not in target.resolve().parents:
        raise Refused(f"{'/'.join(parts)!r} leaves the output folder")
    return target


def _no_link_on_the_way(root: Path, path: Path) -> None:
    for part in _parts_under(root, path):
        if stat.S_ISLNK(_lstat(part).st_mode):
            raise Refused(f"{_shown(root, path)}: {_shown(root, part)} is a symbolic link, not followed")


def _parts_under(root: Path, path: Path) -> list[Path]:
    """Each path from root's first child down to path itself; refused when path is not under root."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        raise Refused(f"{path} is not under {root}") from None
    if ".." in relative.parts:
        raise Refused(f"{path} climbs out of {root}")
    parts, current = [], root
    for name in relative.parts:
        current = current / name
        parts.append(current)
    return parts


def _lstat(path: Path) -> os.stat_result:
    try:
        return path.lstat()
    except OSError as error:
        raise Refused(f"{path.name}: {error.strerror or error}") from None


def _shown(root: Path, path: Path) -> str:
    """A path as staff know it: relative to the folder they gave."""
    try:
        return str(path.relative_to(root)) or "."
    except ValueError:
        return str(path)
