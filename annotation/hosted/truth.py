"""Truth stays with the peer: which routes never reach a page, and what is taken out of the rest.

`refused` names the truth and debug routes, the truth files and the debug switches of a dialect;
`strip_truth` removes the dialect's truth fields (and the echoes no page needs) from a JSON body at
any depth, keeping what a page must read to draw and answer (dialects.CHECK_KEEPS). Every route's
body loses the truth fields of every route: a field the peer adds to another answer is still
removed, and a page never needs a truth field under any name.
"""

from __future__ import annotations

from typing import Any

from annotation.hosted.dialects import CHECK_KEEPS, ECHOES, TRUTH_FILE, Dialect


def refused(dialect: Dialect, path: str, params: dict[str, Any] | None = None) -> str | None:
    """Why this request must never be forwarded to the peer (None: it may be)."""
    if path in dialect.refused_paths or path.startswith(dialect.refused_prefixes):
        return f"{path} is a truth or debug route of {dialect.title}"
    if TRUTH_FILE.match(path):
        return f"{path} is a truth file"
    switches = sorted(dialect.refused_params & set(params or {}))
    if switches:
        return f"the debug switch {', '.join(switches)} is refused"
    return None


def fields_to_strip(dialect: Dialect) -> frozenset[str]:
    return frozenset().union(ECHOES, *dialect.truth_fields.values()) - CHECK_KEEPS


def strip_truth(dialect: Dialect, body: Any) -> Any:
    """The JSON body a page may receive: every truth field of the dialect removed, at any depth."""
    return _without(body, fields_to_strip(dialect))


def _without(value: Any, names: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {key: _without(item, names) for key, item in value.items() if key not in names}
    if isinstance(value, list):
        return [_without(item, names) for item in value]
    return value
