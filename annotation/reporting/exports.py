"""Raw events as JSON lines (schema: docs/events.md, "Export"), streamed at constant memory."""

from __future__ import annotations

import json
from collections.abc import Iterator

from annotation.models import Event, Study

CHUNK = 2000  # rows per database round trip; a server-side cursor on PostgreSQL
FIELDS = (
    "attempt__uid",
    "attempt__participant_id",
    "attempt__participant__kind",
    "attempt__puzzle__uid",
    "attempt__puzzle__type",
    "attempt__purpose",
    "seq",
    "index",
    "kind",
    "t",
    "received",
    "data",
)


def event_lines(*, study: Study) -> Iterator[str]:
    """One line per stored event of the study's attempts, in attempt and batch order."""
    rows = (
        Event.objects.filter(attempt__study=study)
        .order_by("attempt_id", "seq", "index")
        .values_list(*FIELDS)
        .iterator(chunk_size=CHUNK)
    )
    for uid, participant, kind, puzzle, puzzle_type, purpose, seq, index, event_kind, t, received, data in rows:
        yield (
            json.dumps(
                {
                    "attempt": uid,
                    "participant": participant,
                    "participant_kind": kind,
                    "puzzle": puzzle,
                    "type": puzzle_type,
                    "purpose": purpose,
                    "seq": seq,
                    "index": index,
                    "k": event_kind,
                    "t": t,
                    "received": received,
                    **data,
                },
                separators=(",", ":"),
            )
            + "\n"
        )
