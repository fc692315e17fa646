"""Folders someone else made, read without leaving them; exports written without leaving theirs.

A dataset to import or an agent's output folder is untrusted: a symbolic link in it could put the
site's own files (its secrets) on a staff page or into an export, a name like `../../x` could write
outside the export folder, and a huge or deeply nested file could take the worker's memory or stack.
So every importer and exporter goes through here:

- a file is read only if it is a regular file whose every path component under the root is not a
  symbolic link (nothing followed, not even a link that points back inside), up to a size cap;
- JSON is parsed only up to a nesting depth; a file of entries is parsed entry by entry, so one
  broken entry (too deep, too long, not JSON) is refused by name and the others kept;
- an image is decoded only when its header's width x height is within a pixel cap (IMAGE_MAX_PIXELS;
  Pillow's own bomb check, MAX_IMAGE_PIXELS, is set to the same in puzzles/apps.py);
- an id that becomes a file name has no separator, no `..`, no leading `.`, no control character;
- a path an export writes resolves inside the export's root.

Each refusal is a `Refused` naming the file and why, so the importer can name the entry and go on.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

# The published ground_truth.json files are a few MB at most. Parsing JSON takes about 13 times
# its size in memory (64 MiB took ~850 MB): 16 MiB keeps one file's parse near 200 MB.
JSON_MAX_BYTES = 16 * 1024 * 1024
IMAGE_MAX_BYTES = 32 * 1024 * 1024  # the published images are well under 1 MB each
JSON_MAX_DEPTH = 32  # the published entries nest 4 deep; far more is a crafted file
NAME_MAX_BYTES = 200  # a file name is at most 255 bytes; an export adds a suffix to an id
# The largest published image is well under 2 Mpx. Importing one RGB image of 8 Mpx peaks at
# 287 MB in its worker, one of 16 Mpx at 459 MB (measured, with the imprint and the encoding):
# 8 Mpx keeps a worker under 300 MB. Checked from the header, before any pixel is read.
IMAGE_MAX_PIXELS = 8_000_000
IMAGE_FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP")
FIELD_MAX_CHARS = 4_000  # a published prompt or description is a sentence or two
FIELD_MAX_ITEMS = 1_000  # a published list (options, cells, pairs, points) holds a few dozen at most


class Refused(ValueError):
    """A file or name that is not read or written, with why."""


def regular_file(root: Path, path: Path) -> Path:
    """The path, refused unless it is a regular file under root reached through no symbolic link."""
    if not stat.S_ISREG(_no_link_on_the_way(root, path).st_mode):
        raise Refused(f"{_shown(root, path)} is not a regular file")
    return path


def read_bytes(root: Path, path: Path, *, limit: int) -> bytes:
    """A regular file's bytes (regular_file's rules), refused past `limit` bytes before reading.

    What was opened is checked again: the file could have been swapped after the check above (a FIFO
    would block the read: O_NONBLOCK opens it without waiting), and a hard link is refused, since it
    is a regular file in the folder that may be the site's own file (its secrets) elsewhere."""
    regular_file(root, path)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:  # unreadable, or no longer there
        raise Refused(f"{_shown(root, path)}: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as file:
        opened = os.fstat(file.fileno())
        if not stat.S_ISREG(opened.st_mode):
            raise Refused(f"{_shown(root, path)} is not a regular file")
        if opened.st_nlink > 1:
            raise Refused(f"{_shown(root, path)} is a hard link ({opened.st_nlink} names), not read")
        size = opened.st_size
        if size > limit:
            raise Refused(f"{_shown(root, path)} is {size:,} bytes, over the {limit:,} read")
        # Its size and one byte more (asking for the cap would allocate the cap: 0.2 ms a file).
        data = _read(root, path, file, size + 1)
        if len(data) > size:  # it grew since: the rest, up to one byte past the cap
            data += _read(root, path, file, limit + 1 - len(data))
    if len(data) > limit:  # it grew while being read
        raise Refused(f"{_shown(root, path)} is over the {limit:,} bytes read")
    return data


def _read(root: Path, path: Path, file: io.BufferedReader, size: int) -> bytes:
    try:
        return file.read(size)
    except OSError as error:  # an I/O error
        raise Refused(f"{_shown(root, path)}: {error.strerror or error}") from None


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


def read_entries(
    root: Path, path: Path, *, limit: int = JSON_MAX_BYTES, depth: int = JSON_MAX_DEPTH
) -> tuple[dict[str, Any], dict[str, str]]:
    """A JSON object of entries (read_bytes' rules): ({key: entry}, {key: why refused}).

    Each entry is refused on its own when it nests deeper than `depth` - 1 or breaks `bounded`;
    when the whole file is too deep for the parser, the entries are parsed one by one."""
    text = _text(root, path, read_bytes(root, path, limit=limit))
    try:
        members = _parsed_members(json.loads(text))
    except RecursionError:
        members = _members_one_by_one(root, path, text)
    except ValueError as error:
        raise Refused(f"{_shown(root, path)} is not JSON: {str(error)[:120]}") from None
    if members is None:
        raise Refused(f"{_shown(root, path)} is not an object {{id: entry}}")
    return _checked_members(members, depth - 1)


def bounded(value: Any, *, chars: int = FIELD_MAX_CHARS, items: int = FIELD_MAX_ITEMS) -> Any:
    """A parsed JSON value, refused when a string in it is over `chars` or a list or object over `items`."""
    overlong = survey(value, chars=chars, items=items).overlong
    if overlong:
        raise Refused(overlong)
    return value


def storable(value: Any) -> bool:
    """Whether PostgreSQL keeps a parsed JSON value: as jsonb (no NaN or infinity, which are not
    JSON) and as text (no NUL; no lone surrogate, which is no UTF-8: psycopg raises encoding it)."""
    return survey(value).storable


def nesting(value: Any) -> int:
    """How deep lists and objects nest in a parsed JSON value (a scalar is 0), without recursion."""
    return survey(value).depth


@dataclass
class Survey:
    """What one walk over a parsed JSON value finds (bounded, storable and nesting read it)."""

    depth: int = 0  # how deep lists and objects nest: a scalar is 0
    overlong: str = ""  # the first field over its cap, named: a string over `chars`, a list or object over `items`
    storable: bool = True  # no NaN, infinity, NUL or lone surrogate


# Where a field sits: (where its parent sits, its key), None at the top; named only when refused.
_Where = tuple[Any, Any] | None


def survey(value: Any, *, chars: int = FIELD_MAX_CHARS, items: int = FIELD_MAX_ITEMS) -> Survey:
    """One walk over a parsed JSON value, without recursion (a tuple counts as the list JSON
    writes of it): an import's entries are checked in one walk rather than three."""
    found = Survey()
    stack: list[tuple[Any, int, _Where]] = [(value, 0, None)]
    while stack:
        item, level, where = stack.pop()
        if isinstance(item, str):
            if len(item) > chars and not found.overlong:
                found.overlong = f"field {_field(where)} is {len(item):,} characters, over {chars:,}"
            found.storable = found.storable and storable_text(item)
        elif isinstance(item, float):
            found.storable = found.storable and math.isfinite(item)
        elif isinstance(item, (dict, list, tuple)):
            found.depth = max(found.depth, level + 1)
            if len(item) > items and not found.overlong:
                found.overlong = f"field {_field(where)} holds {len(item):,} items, over {items:,}"
            if isinstance(item, dict):
                found.storable = found.storable and all(storable_text(k) for k in item if isinstance(k, str))
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((child, level + 1, (where, key)) for key, child in pairs)
    return found


def _field(where: _Where) -> str:
    keys = []
    while where is not None:
        where, key = where
        keys.append(f".{str(key)[:40]}")
    return "".join(reversed(keys)) or "."


def storable_text(text: str) -> bool:
    """Whether PostgreSQL's text keeps a string: no NUL, valid UTF-8 (no lone surrogate)."""
    if text.isascii():  # no surrogate: no encoding needed to know
        return "\x00" not in text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def _text(root: Path, path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{_shown(root, path)} is not UTF-8 text") from None


def _parsed_members(value: Any) -> list[tuple[str, Any]] | None:
    return list(value.items()) if isinstance(value, dict) else None


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")
_BRACKET_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class _Unparsed(str):
    """An entry's JSON text that does not parse as one value (kept to be refused by name)."""


def _members_one_by_one(root: Path, path: Path, text: str) -> list[tuple[str, Any]] | None:
    """The top-level object's members, each value parsed on its own (one too deep for the parser
    stays unparsed, so the others still import)."""
    members, at = [], _space(text, 0)
    if not text.startswith("{", at):
        return None
    at = _space(text, at + 1)
    while not text.startswith("}", at):
        key, at = _key(root, path, text, at)
        end = _value_end(root, path, text, at)
        members.append((key, _parsed_alone(text[at:end])))
        at = _space(text, end)
        at = _space(text, at + 1) if text.startswith(",", at) else at
    return members


def _key(root: Path, path: Path, text: str, at: int) -> tuple[str, int]:
    """An object key and where its value starts."""
    if not text.startswith('"', at):
        raise Refused(f"{_shown(root, path)} is not JSON: a key expected at character {at}")
    try:  # a key can be broken too (a control character in it)
        key, at = _DECODER.raw_decode(text, at)
    except ValueError as error:
        raise Refused(f"{_shown(root, path)} is not JSON: {str(error)[:120]}") from None
    at = _space(text, at)
    if not text.startswith(":", at):
        raise Refused(f"{_shown(root, path)} is not JSON: ':' expected at character {at}")
    return key, _space(text, at + 1)


def _value_end(root: Path, path: Path, text: str, at: int) -> int:
    """Where the value starting at `at` ends: past its closing bracket, or past a scalar."""
    if not text.startswith(("[", "{"), at):
        try:
            return _DECODER.raw_decode(text, at)[1]
        except ValueError as error:
            raise Refused(f"{_shown(root, path)} is not JSON: {str(error)[:120]}") from None
    level = 0
    for token in _BRACKET_OR_STRING.finditer(text, at):
        level += {"[": 1, "{": 1, "]": -1, "}": -1}.get(token[0], 0)
        if level == 0:
            return token.end()
    raise Refused(f"{_shown(root, path)} is not JSON: an entry never closes")


def _parsed_alone(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _Unparsed(text[:40])


def _space(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _checked_members(members: list[tuple[str, Any]], depth: int) -> tuple[dict[str, Any], dict[str, str]]:
    entries: dict[str, Any] = {}
    refused: dict[str, str] = {}
    for key, value in members:
        if isinstance(value, _Unparsed):
            refused[key] = "does not parse (nested too deep for the parser, or broken)"
            continue
        found = survey(value)
        if found.depth > depth:
            refused[key] = f"nests deeper than {depth} levels"
        elif found.overlong:
            refused[key] = found.overlong
        elif not found.storable:
            refused[key] = "holds NaN, infinity, a NUL or a lone surrogate, which the database cannot keep"
        else:
            entries[key] = value
    return entries, refused


def read_image(
    root: Path, path: Path, *, limit: int = IMAGE_MAX_BYTES, pixels: int = IMAGE_MAX_PIXELS, decode: bool = True
) -> tuple[Image.Image, bytes]:
    """An image decoded (and its bytes), refused before its pixels are read when its header says
    it is larger than `pixels` (read_bytes' rules for the file). With decode=False its pixels are
    read on first use (Pillow's lazy load), for a caller that may never need them."""
    data = read_bytes(root, path, limit=limit)
    try:
        with warnings.catch_warnings():  # Pillow warns between the cap and twice it: ours refuses below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            # The header only; the formats published images come in (EPS would run Ghostscript).
            image = Image.open(io.BytesIO(data), formats=IMAGE_FORMATS)
    except Image.DecompressionBombError:  # past twice Pillow's MAX_IMAGE_PIXELS (puzzles/apps.py)
        raise Refused(f"{_shown(root, path)} is over the {pixels:,} pixels read") from None
    width, height = image.size
    if width * height > pixels:
        raise Refused(f"{_shown(root, path)} is {width}x{height}, over the {pixels:,} pixels read")
    if decode:
        image.load()
    return image, data


def regular_folder(root: Path, folder: Path) -> Path:
    """The folder, refused unless it is one under root reached through no symbolic link."""
    if not stat.S_ISDIR(_no_link_on_the_way(root, folder).st_mode):
        raise Refused(f"{_shown(root, folder)} is not a folder")
    return folder


_NAME_RULES = (
    (lambda name: len(name.encode("utf-8", "surrogatepass")) > NAME_MAX_BYTES, "is too long"),
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


def name_problem(value: object, *, what: str = "id") -> str:
    """Why the value cannot be one file name (safe_name's rules), or "" when it can."""
    try:
        safe_name(value, what=what)
    except Refused as why:
        return str(why)
    return ""


def output_path(root: Path, *parts: str) -> Path:
    """Where an export writes root/parts..., refused unless it resolves inside root and is no link."""
    target = root.joinpath(*parts)
    if target.is_symlink():
        raise Refused(f"{_shown(root, target)} is a symbolic link, not written through")
    resolved_root = root.resolve()
    if resolved_root not in target.resolve().parents:
        raise Refused(f"{'/'.join(parts)!r} leaves the output folder")
    return target


def _no_link_on_the_way(root: Path, path: Path) -> os.stat_result:
    """Refused when a path from root down to path is a symbolic link; else path's own lstat."""
    found = None
    for part in _parts_under(root, path):
        found = _lstat(part)
        if stat.S_ISLNK(found.st_mode):
            raise Refused(f"{_shown(root, path)}: {_shown(root, part)} is a symbolic link, not followed")
    return found or _lstat(path)  # no part: path is root itself


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
