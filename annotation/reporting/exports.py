"""Exports: raw events as JSON lines (schema: docs/events.md, "Export"), streamed at constant
memory. The per-participant CSV is the studies domain's (annotation/studies/exports.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from annotation.models import Event, Study

CHUNK = 2000  # rows per database round trip; a server-side cursor on PostgreSQL
# Each stored field the export reads, and its name in a line, in the line's order; the event's own
# fields follow (docs/events.md, "Export").
EXPORTED = {
    "attempt__uid": "attempt",
    "attempt__participant_id": "participant",
    "attempt__participant__kind": "participant_kind",
    "attempt__puzzle__uid": "puzzle",
    "attempt__puzzle__type": "type",
    "attempt__purpose": "purpose",
    "attempt__position": "position",
    "seq": "seq",
    "index": "index",
    "kind": "k",
    "t": "t",
    "received": "received",
}


def event_lines(*, study: Study) -> Iterator[str]:
    """One line per stored event of the study's attempts, in attempt and batch order."""
    rows = (
        Event.objects.filter(attempt__study=study)
        .order_by("attempt_id", "seq", "index")
        .values_list(*EXPORTED, "data")
        .iterator(chunk_size=CHUNK)
    )
    for *fields, data in rows:
        line = {**dict(zip(EXPORTED.values(), fields)), **data}
        yield json.dumps(line, separators=(",", ":")) + "\n"
