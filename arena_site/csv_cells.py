"""CSV that a spreadsheet opens as data: every CSV the site or a command writes goes through
csv_write (the report's per-type rows and its summary, the per-participant export, the labels).

A text cell that starts with =, +, -, @, a tab or a carriage return is one a spreadsheet may run
as a formula (a crowd id `=HYPERLINK(...)` in the file staff open to pay people, a dataset's
puzzle id in the labels); it gets a leading apostrophe (OWASP's rule for CSV injection), so the
spreadsheet shows it as the text it is. Only text is escaped: numbers (int, float, Decimal, bool)
are data and are written as numbers, so -0.5 stays a number a spreadsheet can sum; anything else
is text as str() writes it, and None is an empty cell.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from decimal import Decimal
from typing import Protocol

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class TextSink(Protocol):
    """Where CSV goes: an open text file, a StringIO, an HttpResponse."""

    def write(self, text: str, /) -> object: ...


def safe_cell(value: object) -> object:
    """The value as a cell no spreadsheet runs: numbers as they are, text a formula would start quoted."""
    if value is None:
        return ""
    if isinstance(value, int | float | Decimal):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_write(stream: TextSink, rows: Iterable[Iterable[object]]) -> None:
    """The rows to the stream as CSV, each cell through safe_cell."""
    writer = csv.writer(stream)
    for row in rows:
        writer.writerow([safe_cell(value) for value in row])


def csv_text(rows: Iterable[Iterable[object]]) -> str:
    """The rows as CSV text (csv_write to a string)."""
    out = io.StringIO()
    csv_write(out, rows)
    return out.getvalue()
