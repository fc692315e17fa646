"""The frames of the live page's protocol (docs/events.md), both ways. Pure: no database.

Every field of every event kind a page sends is declared here; anything else is refused with a
message that names the problem, so a broken or forged client learns exactly what was wrong. The
frames the server sends are declared here too (OUTBOUND, ERROR_CODES), each made by its
constructor (ack_frame, error_frame, hold_frame, submitted_frame); tests hold every frame sent
and every type the page handles to the declaration.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

MAX_FRAME_BYTES = 256 * 1024
MAX_EVENTS = 500
MAX_SEQ = 10**9
# Each load of an attempt's page numbers its batches in a range of its own, given by the server in
# the page data (docs/events.md, "Pages"): page p sends p * SEQ_BLOCK + 1, + 2, ... So two pages of
# one attempt (two browsers, or a reload that resends what the last load left) never number alike,
# and each is stored once per (page, number). The first load is page 0 (1, 2, 3...), as before.
SEQ_BLOCK = 1_000_000
MAX_PAGES = MAX_SEQ // SEQ_BLOCK  # pages 0..999; a multiple of SEQ_BLOCK is no batch's number
# The most batches one HTTP fallback request may carry (a JSON list of batch frames).
MAX_POSTED_BATCHES = 32
MAX_TEXT = 64  # an act.type's text (the text box's limit)
MAX_KEY_TEXT = 32  # a key's `key` and `code`, an input's `input_type`
# A batch is three levels deep (frame, event list, event); anything deeper is refused before it
# is looked at, and JSON deep enough to exhaust the parser's recursion is refused too.
MAX_JSON_DEPTH = 8
# What one attempt may store. A 5-minute attempt with the pointer moving all the time at 120 Hz
# logs about 36,000 pointermove samples, 300 beats and a few hundred other events: some 37,000
# events of about 80 bytes, 3 MB. Past either limit an attempt keeps only its semantic actions
# (ACTIONS_PAST_LIMIT more at most; beyond that only a submit), so it can always be finished.
MAX_ATTEMPT_EVENTS = 50_000
MAX_ATTEMPT_BYTES = 8 * 1024 * 1024
ACTIONS_PAST_LIMIT = 5_000
# The page's heartbeat: a `beat` event this often while it is visible (sent in the page data), so
# a gap in arrival well beyond it means the page was hidden, throttled or not telling.
BEAT_MS = 1000
STAGE_SPAN = (-20000.0, 20000.0)  # pointer positions may fall outside the stage, within reason
# Client timestamps are epoch ms; refuse anything that is not plausibly "now" (2020..2100).
T_RANGE = (1.5e12, 4.2e12)


# --- frames the server sends ------------------------------------------------------------------
# Per type, its fields besides "type": (required, optional).
OUTBOUND: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "ack": (frozenset({"seq"}), frozenset()),  # the highest contiguous batch number stored
    "error": (frozenset({"code", "message"}), frozenset({"seq"})),  # a frame refused, and why
    "hold": (frozenset({"progress"}), frozenset()),  # the server's own measure of a hold, 0..1
    "submitted": (frozenset({"verdict"}), frozenset()),  # scored; {"correct": bool} or null
}
ERROR_CODES = frozenset({"bad_frame", "not_allowed", "closed", "too_large", "seq_conflict", "limit"})


def page_of(seq: int) -> int:
    """The page (its load of the attempt) a batch number or an acknowledgement belongs to."""
    return seq // SEQ_BLOCK


def ack_frame(seq: int) -> dict[str, Any]:
    return {"type": "ack", "seq": seq}


def error_frame(code: str, message: str, seq: int | None = None) -> dict[str, Any]:
    assert code in ERROR_CODES, code
    frame: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if seq is not None:
        frame["seq"] = seq
    return frame


def hold_frame(progress: float) -> dict[str, Any]:
    return {"type": "hold", "progress": round(progress, 3)}


def submitted_frame(*, correct: bool | None, show: bool) -> dict[str, Any]:
    # The verdict at most; the truth itself is never sent.
    return {"type": "submitted", "verdict": {"correct": bool(correct)} if show else None}


def frame_text(frame: dict[str, Any]) -> str:
    """A frame as sent: json.dumps's text. An ack, most of what a socket sends, is written out
    directly, the very same text, without the encoder's cost."""
    if frame["type"] == "ack" and len(frame) == 2 and type(frame["seq"]) is int:
        return f'{{"type": "ack", "seq": {frame["seq"]}}}'
    return json.dumps(frame)


def outbound_problem(frame: Any) -> str | None:
    """Why a frame the server sends does not match its declaration, or None when it does."""
    if not isinstance(frame, dict) or frame.get("type") not in OUTBOUND:
        return f"undeclared frame {frame!r}"
    required, optional = OUTBOUND[frame["type"]]
    fields = set(frame) - {"type"}
    if not required <= fields <= required | optional:
        return f"{frame['type']} frame with fields {sorted(fields)}, declared {sorted(required)} + {sorted(optional)}"
    values = {
        "ack": lambda: _whole(frame["seq"], 0),
        "error": lambda: (
            frame["code"] in ERROR_CODES
            and isinstance(frame["message"], str)
            and ("seq" not in frame or _whole(frame["seq"], 1))
        ),
        "hold": lambda: isinstance(frame["progress"], (int, float)) and 0 <= frame["progress"] <= 1,
        "submitted": lambda: (
            frame["verdict"] is None
            or (set(frame["verdict"]) == {"correct"} and isinstance(frame["verdict"]["correct"], bool))
        ),
    }
    return None if values[frame["type"]]() else f"{frame['type']} frame with a value out of its declaration: {frame}"


def _whole(value: Any, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


class FrameError(ValueError):
    def __init__(self, code: str, message: str, seq: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.seq = seq

    def as_frame(self) -> dict[str, Any]:
        return error_frame(self.code, self.message, self.seq)


@dataclass(frozen=True)
class Limits:
    """What a semantic action of this attempt's puzzle may refer to."""

    image_w: int
    image_h: int
    cells: int  # grid cells, 0 without a grid


@dataclass(frozen=True)
class Batch:
    seq: int
    events: list[dict[str, Any]]  # each {"k", "t", **fields}, validated
    size: int = 0  # bytes of the frame it came in; 0 when not read from a frame
    # The frame's own text when the database reads from it exactly the events validated (parse_frame):
    # the usual batch is then stored from it, its events not encoded again (most of a store's cost).
    text: str | None = None

    @cached_property  # asked of every batch more than once on its way (set on the instance, not a field)
    def has_submit(self) -> bool:
        return any(e["k"] == "act.submit" for e in self.events)


# --- field checks: each returns the clean value or raises ValueError(why) --------------------
Check = Callable[[Any, Limits], Any]


def _number(low: float, high: float) -> Callable[[Any, Limits], float]:
    def check(value: Any, limits: Limits) -> float:
        if type(value) is float and low <= value <= high:  # the usual value, at once (NaN fails the range)
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError("must be a finite number")
        if not low <= value <= high:
            raise ValueError(f"{value:g} is outside {low:g}..{high:g}")
        return float(value)

    return check


def _choice(*options: object) -> Check:
    def check(value: Any, limits: Limits) -> Any:
        if value not in options:
            raise ValueError(f"must be one of {', '.join(map(str, options))}")
        return value

    return check


def _text(max_length: int) -> Callable[[Any, Limits], str]:
    def check(value: Any, limits: Limits) -> str:
        if not isinstance(value, str) or len(value) > max_length:
            raise ValueError(f"must be text of at most {max_length} characters")
        # What the database cannot store is refused here, not stuck there: PostgreSQL would refuse
        # the whole batch statement, and the page would resend it for ever.
        if "\x00" in value:
            raise ValueError("must not contain NUL characters")
        if not value.isascii() and not _encodable(value):
            raise ValueError("must not contain lone surrogates (a \\ud800-\\udfff escape unpaired)")
        return value

    return check


def _encodable(value: str) -> bool:
    """Whether the text is valid Unicode: a JSON escape such as "\\ud800" left unpaired is not."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _natural_x(value: Any, limits: Limits) -> float:
    return _number(0, limits.image_w - 1e-6)(value, limits)


def _natural_y(value: Any, limits: Limits) -> float:
    return _number(0, limits.image_h - 1e-6)(value, limits)


def _cell(value: Any, limits: Limits) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < limits.cells:
        raise ValueError(f"must be a cell index 0..{limits.cells - 1}")
    return value


def _delta(value: Any, limits: Limits) -> int:
    if value not in (1, -1) or isinstance(value, bool):
        raise ValueError("must be +1 or -1")
    return value


# What a `focusin` may name: a stage control, or a grid cell by its index (static/arena/events.js).
FOCUS_TARGETS = frozenset({"submit", "next", "prev", "reset", "hold", "text", "slider", "image", "other"})


def _focus_target(value: Any, limits: Limits) -> str:
    if isinstance(value, str) and (value in FOCUS_TARGETS or _is_cell_target(value, limits.cells)):
        return value
    raise ValueError(f"must be one of {', '.join(sorted(FOCUS_TARGETS))} or cell:0..cell:{max(0, limits.cells - 1)}")


def _is_cell_target(value: str, cells: int) -> bool:
    index = value.removeprefix("cell:")
    return index != value and index.isascii() and index.isdigit() and len(index) <= 4 and int(index) < cells


_stage = _number(*STAGE_SPAN)
_size = _number(0, 100000)
_scale = _number(0, 100)
_button = _choice(0, 1, 2, 3, 4)
_pointer = _choice("mouse", "pen", "touch")

KINDS: dict[str, dict[str, Check]] = {
    "load": {"w": _size, "h": _size, "scale": _scale, "state": _choice("hidden", "visible")},
    "pointerdown": {"x": _stage, "y": _stage, "button": _button, "pointer": _pointer},
    "pointerup": {"x": _stage, "y": _stage, "button": _button, "pointer": _pointer},
    "pointercancel": {"x": _stage, "y": _stage, "button": _button, "pointer": _pointer},
    "pointermove": {"x": _stage, "y": _stage, "pointer": _pointer},
    "click": {"x": _stage, "y": _stage, "button": _button},
    "keydown": {"key": _text(MAX_KEY_TEXT), "code": _text(MAX_KEY_TEXT)},
    "keyup": {"key": _text(MAX_KEY_TEXT), "code": _text(MAX_KEY_TEXT)},
    "input": {"input_type": _text(MAX_KEY_TEXT)},
    "wheel": {"x": _stage, "y": _stage, "dx": _number(-1e6, 1e6), "dy": _number(-1e6, 1e6)},
    "visibilitychange": {"state": _choice("hidden", "visible")},
    "focus": {},
    "blur": {},
    "focusin": {"target": _focus_target},
    "resize": {"w": _size, "h": _size, "scale": _scale},
    "beat": {},
    "act.click": {"x": _natural_x, "y": _natural_y},
    "act.toggle": {"cell": _cell},
    "act.swap": {"a": _cell, "b": _cell},
    "act.cycle": {"delta": _delta},
    "act.reset": {},
    "act.drag_start": {"x": _natural_x, "y": _natural_y},
    "act.drag_end": {"x": _natural_x, "y": _natural_y},
    "act.hold_start": {},
    "act.hold_end": {},
    "act.type": {"text": _text(MAX_TEXT)},
    "act.submit": {},
}
_T: Check = _number(*T_RANGE)
# Per kind, built once (not per event): the fields its events may hold, and the checks in order.
_ALLOWED: dict[str, frozenset[str]] = {kind: frozenset(fields) | {"k", "t"} for kind, fields in KINDS.items()}
_CHECKS: dict[str, tuple[tuple[str, Check], ...]] = {
    kind: (("t", _T), *fields.items()) for kind, fields in KINDS.items()
}


def parse_frame(raw: str | bytes, limits: Limits) -> Batch:
    """A validated batch from the raw text of a frame, or FrameError naming the first problem."""
    if len(raw) > MAX_FRAME_BYTES:
        raise FrameError("too_large", f"frame of {len(raw)} bytes is over {MAX_FRAME_BYTES}")
    try:
        frame = _json(raw, MAX_JSON_DEPTH)
    except ValueError as error:
        raise FrameError("bad_frame", f"frame is {error}") from None
    try:
        batch = parse_batch(frame, limits)
    except FrameError:
        # A valid batch is 3 levels deep by its shape, so the walk over every value is paid only
        # by a frame refused anyway (it was most of the cost of parsing a usual one); the depth,
        # when over the limit, is what it is refused for.
        if _deeper_than(frame, MAX_JSON_DEPTH):
            raise FrameError("bad_frame", f"frame is nested deeper than {MAX_JSON_DEPTH} levels") from None
        raise
    text = raw if isinstance(raw, str) and _read_alike(raw, frame, batch) else None
    return Batch(batch.seq, batch.events, len(raw), text)


def parse_frames(raw: str | bytes, limits: Limits) -> list[Batch | FrameError]:
    """A JSON list of at most MAX_POSTED_BATCHES batch frames, each validated as parse_frame does
    one (its own error, with its seq when known, for one that is not a valid batch); FrameError
    when the whole is not such a list."""
    if len(raw) > MAX_POSTED_BATCHES * MAX_FRAME_BYTES:
        raise FrameError("too_large", f"request of {len(raw)} bytes is over {MAX_POSTED_BATCHES * MAX_FRAME_BYTES}")
    try:
        frames = _json(raw, MAX_JSON_DEPTH + 1)
    except ValueError as error:
        raise FrameError("bad_frame", f"request is {error}") from None
    if not isinstance(frames, list) or not 1 <= len(frames) <= MAX_POSTED_BATCHES:
        raise FrameError("bad_frame", f"expected a list of 1 to {MAX_POSTED_BATCHES} batch frames")
    return [_listed_batch(frame, limits) for frame in frames]


def _listed_batch(frame: Any, limits: Limits) -> Batch | FrameError:
    try:
        batch = parse_batch(frame, limits)
    except FrameError as error:
        if _deeper_than(frame, MAX_JSON_DEPTH):
            return FrameError("bad_frame", f"frame is nested deeper than {MAX_JSON_DEPTH} levels", error.seq)
        return error
    return batch  # its size is counted from its events when stored (intake._size)


# A number written with an exponent ("1e3"): a float to Python, but an integer to PostgreSQL's jsonb
# when its value is whole ("1000"), which would read back as an int. (Text may match too, a typed
# "3e" or an escape such as "\u00e9": such a frame is only encoded again, as before.)
_EXPONENT = re.compile(r"[0-9][eE]")


def _read_alike(raw: str, frame: dict[str, Any], batch: Batch) -> bool:
    """Whether PostgreSQL reading the frame's text gives the events exactly as validated, read back
    as the same values and types: every event validation took as it came (no
    integer made a float; _parse_event hands such an event back itself) and no number written with
    an exponent. Numbers then differ at most in digits a float does not hold ("10.50" is kept as
    written and reads back 10.5, as "10.5" does), and strings are the same strings."""
    return all(map(operator.is_, batch.events, frame["events"])) and _EXPONENT.search(raw) is None


def load_json(raw: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """JSON text as Python values, or ValueError saying why not: not JSON, or nested deeper
    than max_depth (also when too deep for the parser itself, which would otherwise fail with a
    RecursionError, a server error to the client)."""
    value = _json(raw, max_depth)
    if _deeper_than(value, max_depth):
        raise ValueError(f"nested deeper than {max_depth} levels")
    return value


def _json(raw: str | bytes, max_depth: int) -> Any:
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError among them
        raise ValueError(f"not JSON: {error}") from None


def _deeper_than(value: Any, depth: int) -> bool:
    """Whether containers nest more than `depth` levels (iterative: the input is hostile)."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            if level > depth:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return False


def parse_batch(frame: Any, limits: Limits) -> Batch:
    if not isinstance(frame, dict) or frame.get("type") != "batch":
        raise FrameError("bad_frame", 'expected {"type": "batch", "seq": N, "events": [...]}')
    seq = frame.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq <= MAX_SEQ:
        raise FrameError("bad_frame", "seq must be a whole number from 1")
    if seq % SEQ_BLOCK == 0:  # page p's "nothing acknowledged yet", never a batch of its own
        raise FrameError(
            "bad_frame", f"seq {seq} is no batch number: a page's numbers start after a multiple of {SEQ_BLOCK}"
        )
    extra = set(frame) - {"type", "seq", "events"}
    if extra:
        raise FrameError("bad_frame", f"unknown frame field {sorted(extra)[0]!r}", seq)
    events = frame.get("events")
    if not isinstance(events, list) or not events:
        raise FrameError("bad_frame", "events must be a non-empty list", seq)
    if len(events) > MAX_EVENTS:
        raise FrameError("too_large", f"{len(events)} events in one batch, at most {MAX_EVENTS}", seq)
    return Batch(seq, [_parse_event(event, i, limits, seq) for i, event in enumerate(events)])


def _parse_event(event: Any, index: int, limits: Limits, seq: int) -> dict[str, Any]:
    """The event, validated. A well-formed one is taken by the fast path: exactly its kind's
    fields (every declared field is required, so that many keys, all found, leave none unknown),
    each passing its check. Anything else goes through _event_checked, which names the first
    problem (a busy process validates thousands of events a second, nearly all well-formed)."""
    kind = event.get("k") if type(event) is dict else None
    checks = _CHECKS.get(kind) if type(kind) is str else None
    if checks is not None and len(event) == len(checks) + 1:
        try:
            clean = _fields_checked(event, checks, limits)
        except (KeyError, ValueError):
            pass
        else:
            if kind != "act.swap" or clean["a"] != clean["b"]:
                return clean
    return _event_checked(event, index, limits, seq)


def _fields_checked(event: dict[str, Any], checks: tuple[tuple[str, Check], ...], limits: Limits) -> dict[str, Any]:
    """The event with every field checked: the event itself when each check kept its value as it
    was (the usual case, and how parse_frame knows the frame can be stored as received), else a copy
    with the checked values (an integer where a number is declared becomes a float)."""
    clean = event
    for name, check in checks:
        value = event[name]
        checked = check(value, limits)
        if checked is not value:
            if clean is event:
                clean = dict(event)
            clean[name] = checked
    return clean


def _event_checked(event: Any, index: int, limits: Limits, seq: int) -> dict[str, Any]:
    """The event validated field by field, or FrameError naming its first problem."""
    if not isinstance(event, dict):
        raise FrameError("bad_frame", f"event {index} is not an object", seq)
    kind = event.get("k")
    if not isinstance(kind, str) or kind not in _CHECKS:
        raise FrameError("bad_frame", f"event {index} has unknown kind {kind!r}", seq)
    # The place is named only when refused (_at): a busy process parses thousands of events a second.
    unknown = event.keys() - _ALLOWED[kind]
    if unknown:
        raise FrameError("bad_frame", f"{_at(index, kind)} has unknown field {sorted(unknown)[0]!r}", seq)
    clean: dict[str, Any] = {"k": kind}
    for name, check in _CHECKS[kind]:
        if name not in event:
            raise FrameError("bad_frame", f"{_at(index, kind)} lacks field {name!r}", seq)
        try:
            clean[name] = check(event[name], limits)
        except ValueError as why:
            raise FrameError("bad_frame", f"{_at(index, kind)} field {name!r} {why}", seq) from None
    if kind == "act.swap" and clean["a"] == clean["b"]:
        raise FrameError("bad_frame", f"{_at(index, kind)} swaps a cell with itself", seq)
    return clean


def _at(index: int, kind: str) -> str:
    return f"event {index} ({kind})"
