"""What a live page sends, for tests: frames and events, the real WebSocket, a person's hand
(Hand: raw input and the actions it makes, docs/events.md), batches delivered through intake, and
answers submitted through the real path."""

import json
import time
from datetime import UTC

from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.live.frames import Batch
from annotation.live.intake import Appended, events_append
from arena_site.asgi import application


def socket_at(path: str, session: str | None) -> WebsocketCommunicator:
    """One of the site's sockets through the full ASGI app, opened as the test server's page would."""
    headers = [(b"origin", b"http://testserver")]
    if session:
        headers.append((b"cookie", f"sessionid={session}".encode()))
    return WebsocketCommunicator(application, path, headers=headers)


def socket_for(uid: str, session: str | None) -> WebsocketCommunicator:
    return socket_at(f"/ws/attempts/{uid}/", session)


def session_of(username: str, *, staff: bool) -> str:
    """The session cookie of a new signed-in user."""
    client = Client()
    client.force_login(get_user_model().objects.create_user(username, is_staff=staff))
    return client.cookies["sessionid"].value


def batch(seq: int, *events: dict) -> str:
    return json.dumps({"type": "batch", "seq": seq, "events": list(events)})


def ev(kind: str, t: float | None = None, **fields) -> dict:
    """A raw event as the page logs it, at t (epoch ms; now when not given)."""
    return {"k": kind, "t": t if t is not None else time.time() * 1000, **fields}


def load(t: float | None = None) -> dict:
    """The page's load event: a 1280x1080 window, visible."""
    return ev("load", t, w=1280, h=1080, scale=1, state="visible")


def send(attempt, seq: int, *events: dict, at: float) -> Appended:
    """A batch stored through intake as received at `at` (epoch ms)."""
    return events_append(attempt_id=attempt.pk, batch=Batch(seq, list(events)), received_ms=at)


class Hand:
    """The events a person's page logs (docs/events.md): raw pointer and key input, each semantic
    action stamped like the DOM event that caused it, and a beat every second while visible.
    Places are stage pixels of the puzzle's layout; `t` is the page's clock, epoch ms."""

    def __init__(self, puzzle, t: float):
        from puzzles.registry import get_type

        self.layout = get_type(puzzle.type).layout(puzzle.public)
        self.t = self.last_beat = t
        self.x, self.y = 640.0, 1040.0  # the pointer starts low on the stage
        self.events = [{"k": "load", "t": t, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}]

    def log(self, kind: str, **fields) -> dict:
        while self.t - self.last_beat >= 1000:
            self.last_beat += 1000
            self.events.append({"k": "beat", "t": self.last_beat})
        event = {"k": kind, "t": round(self.t, 3), **fields}
        self.events.append(event)
        return event

    def wait(self, ms: float) -> "Hand":
        self.t += ms
        return self

    def hidden(self, ms: float) -> "Hand":
        """The page hidden (another tab) for ms: it says so, and does not beat meanwhile."""
        self.log("visibilitychange", state="hidden")
        self.t += ms
        self.last_beat = self.t
        self.log("visibilitychange", state="visible")
        return self

    def quiet(self, ms: float) -> "Hand":
        """The page sends nothing for ms and does not say it was hidden (a script that leaves out
        visibility events, or a page throttled in the background)."""
        self.t += ms
        self.last_beat = self.t
        return self

    def move(self, x: float, y: float, steps: int = 4) -> "Hand":
        x0, y0 = self.x, self.y
        for i in range(1, steps + 1):
            self.t += 8
            self.log("pointermove", x=x0 + (x - x0) * i / steps, y=y0 + (y - y0) * i / steps, pointer="mouse")
        self.x, self.y = x, y
        return self

    def press(self, x: float, y: float, *acts: dict, hold_ms: float = 60) -> "Hand":
        """Move there and click: pointerdown, pointerup, click; the actions share the click's stamp."""
        self.move(x, y)
        self.t += 20
        self.log("pointerdown", x=x, y=y, button=0, pointer="mouse")
        self.t += hold_ms
        self.log("pointerup", x=x, y=y, button=0, pointer="mouse")
        self.log("click", x=x, y=y, button=0)
        for act in acts:
            self.log(act["k"], **{k: v for k, v in act.items() if k != "k"})
        return self

    def press_control(self, name: str, *acts: dict) -> "Hand":
        """Press a control; the press gives it the focus (the page logs a focusin naming it)."""
        self.press(*self.layout.control(name).center())
        self.log("focusin", target=name)
        for act in acts:
            self.log(act["k"], **{k: v for k, v in act.items() if k != "k"})
        return self

    def type(self, text: str) -> "Hand":
        """Each character: keydown, the input event and its act.type, keyup."""
        for end in range(1, len(text) + 1):
            self.t += 90
            self.log("keydown", key=text[end - 1], code=f"Digit{text[end - 1]}")
            self.t += 1
            self.log("input", input_type="insertText")
            self.log("act.type", text=text[:end])
            self.t += 40
            self.log("keyup", key=text[end - 1], code=f"Digit{text[end - 1]}")
        return self


def deliver(attempt, events: list[dict], *, latency_ms: float = 20.0, first_seq: int = 1) -> list:
    """Send events through the real path as the page does: cut into batches every 100 ms and
    after each semantic action, each received latency_ms after its last event. Returns each
    batch's Appended."""
    from annotation.live.frames import Batch
    from annotation.live.intake import events_append

    groups: list[list[dict]] = []
    for event in events:
        if not groups or event["t"] - groups[-1][0]["t"] >= 100 or groups[-1][-1]["k"].startswith("act."):
            groups.append([])
        groups[-1].append(event)
    return [
        events_append(attempt_id=attempt.pk, batch=Batch(seq, group), received_ms=group[-1]["t"] + latency_ms)
        for seq, group in enumerate(groups, start=first_seq)
    ]


def served_at(attempt, epoch_ms: float) -> None:
    """As if the attempt's puzzle had been served at epoch_ms."""
    from datetime import datetime

    from annotation.models import Attempt

    when = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    Attempt.objects.filter(pk=attempt.pk).update(created_at=when, served_at=when)


def submit_answer(attempt, correct: bool = True, *, wall_ms: float = 0.0):
    """Submit an attempt through the real path (events_append), right or wrong, for the two types
    the study tests use: Dice_Count (typed sum) and Object_Match (arrow steps); any other type is
    only submitted (wrong). The events are a person's: the pointer and keys that make each action
    (Hand), in one batch that arrives at the submit. wall_ms: the page was shown that long before
    the submit (at least as long as the hand needs)."""
    import time
    from datetime import datetime

    from annotation.live.frames import Batch
    from annotation.live.intake import events_append
    from annotation.models import Attempt

    now = time.time() * 1000
    truth = attempt.puzzle.truth
    hand = Hand(attempt.puzzle, 0.0)  # drawn from 0, then moved to end at now
    if attempt.puzzle.type == "Dice_Count":
        hand.press_control("text").type(str(truth["sum"] + (0 if correct else 1)))
    elif "correct_option_index" in truth:
        steps = truth["correct_option_index"] + (0 if correct else 1)
        for _ in range(steps % truth["option_count"]):
            hand.press_control("next", {"k": "act.cycle", "delta": 1})
    hand.press_control("submit", {"k": "act.submit"})
    span = max(wall_ms, hand.t)
    events = [{**e, "t": e["t"] + now - hand.t} for e in hand.events]
    events[0]["t"] = now - span  # the page was shown, the hand came later
    # Served a moment before the page showed it.
    opened = datetime.fromtimestamp((now - span - 100) / 1000, tz=UTC)
    Attempt.objects.filter(pk=attempt.pk).update(created_at=opened, served_at=opened)
    return events_append(attempt_id=attempt.pk, batch=Batch(attempt.max_seq + 1, events), received_ms=now)
