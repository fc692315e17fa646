"""The frames of the protocol (annotation/live/frames.py): the fast paths give what the full ones give."""

import json

import pytest

from annotation.live.frames import (
    FrameError,
    Limits,
    _event_checked,
    _parse_event,
    ack_frame,
    error_frame,
    frame_text,
    hold_frame,
    submitted_frame,
)

LIMITS = Limits(image_w=640, image_h=480, cells=9)
T = 1.79e12
EVENTS = [
    {"k": "pointermove", "t": T, "x": 1.5, "y": 2.5, "pointer": "mouse"},
    {"k": "pointermove", "t": T, "x": 1, "y": 2.5, "pointer": "mouse"},  # an integer: made a float
    {"k": "pointermove", "t": T, "x": True, "y": 2.5, "pointer": "mouse"},
    {"k": "pointermove", "t": T, "x": float("nan"), "y": 2.5, "pointer": "mouse"},
    {"k": "pointermove", "t": T, "x": 1e9, "y": 2.5, "pointer": "mouse"},
    {"k": "pointermove", "t": T, "x": 1.5, "pointer": "mouse"},  # lacks y
    {"k": "pointermove", "t": T, "x": 1.5, "y": 2.5, "z": 0.0, "pointer": "mouse"},
    {"k": "pointermove", "t": T, "x": 1.5, "z": 2.5, "pointer": "mouse"},  # as many keys, one unknown
    {"k": "pointermove", "t": 5.0, "x": 1.5, "y": 2.5, "pointer": "mouse"},
    {"k": "pointerdown", "t": T, "x": 1.5, "y": 2.5, "button": True, "pointer": "pen"},
    {"k": "act.click", "t": T, "x": 639.9, "y": 480.0},
    {"k": "act.swap", "t": T, "a": 1, "b": 1},
    {"k": "act.swap", "t": T, "a": 1, "b": 2},
    {"k": "act.toggle", "t": T, "cell": 9},
    {"k": "act.type", "t": T, "text": "a\x00b"},
    {"k": "act.type", "t": T, "text": "a\ud800b"},
    {"k": "act.type", "t": T, "text": "a\U0001f600b"},
    {"k": "focusin", "t": T, "target": "cell:8"},
    {"k": "beat", "t": T},
    {"k": "nothing", "t": T},
    {"k": ["pointermove"], "t": T},
    {"t": T},
    ["pointermove"],
]


def _outcome(parse, event):
    try:
        return parse(json.loads(json.dumps(event)), 3, LIMITS, 7)  # as parsed from a frame
    except FrameError as error:
        return (error.code, error.message, error.seq)


@pytest.mark.parametrize("event", EVENTS, ids=lambda event: json.dumps(event)[:60])
def test_the_fast_path_accepts_and_refuses_as_the_field_by_field_check(event):
    fast, checked = _outcome(_parse_event, event), _outcome(_event_checked, event)
    assert fast == checked
    if isinstance(fast, dict):
        assert [(name, type(value)) for name, value in sorted(fast.items())] == [
            (name, type(value)) for name, value in sorted(checked.items())
        ]


def test_an_ack_is_sent_as_the_json_encoder_writes_it():
    frames = [ack_frame(0), ack_frame(7), ack_frame(10**9), error_frame("closed", 'a "quoted" é'), hold_frame(0.5)]
    frames.append(submitted_frame(correct=True, show=True))
    assert [frame_text(frame) for frame in frames] == [json.dumps(frame) for frame in frames]
