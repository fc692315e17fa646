"""The WebSocket consumer through the full ASGI app, against the real database."""

import asyncio
import json
import threading
import time
from datetime import UTC, datetime

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async

from annotation.models import Attempt, Event
from tests.live_stream import batch, ev, load, socket_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture(autouse=True)
def _every_frame_sent_as_declared(monkeypatch):
    """Every frame the consumer sends in these tests is held to its declaration (live/frames.py)."""
    from channels.testing import WebsocketCommunicator

    from annotation.live.frames import outbound_problem

    received = WebsocketCommunicator.receive_json_from

    async def checked(self, timeout=1):
        frame = await received(self, timeout)
        assert outbound_problem(frame) is None, outbound_problem(frame)
        return frame

    monkeypatch.setattr(WebsocketCommunicator, "receive_json_from", checked)


async def connected(uid, session):
    socket = socket_for(uid, session)
    ok, _ = await socket.connect()
    assert ok
    return socket


async def reload(attempt) -> Attempt:
    return await database_sync_to_async(Attempt.objects.get)(pk=attempt.pk)


async def opened_at(attempt, epoch_ms: float) -> None:
    """Backdate an attempt's opening, as if its page had been shown that long ago."""
    when = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    await database_sync_to_async(Attempt.objects.filter(pk=attempt.pk).update)(created_at=when)


async def stored_events(attempt) -> list[tuple]:
    return await database_sync_to_async(
        lambda: list(Event.objects.filter(attempt=attempt).values_list("seq", "index", "kind"))
    )()


async def test_a_right_click_is_scored_correct_on_the_server(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Geometry_Click")
    x, y = attempt.puzzle.truth["point"]
    socket = await connected(attempt.uid, session)
    await socket.send_to(text_data=batch(1, load(), ev("pointerdown", x=1, y=2, button=0, pointer="mouse")))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    await socket.send_to(text_data=batch(2, ev("act.click", x=x, y=y), ev("act.submit")))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 2}
    assert await socket.receive_json_from() == {"type": "submitted", "verdict": None}
    await socket.disconnect()
    stored = await reload(attempt)
    assert (stored.correct, stored.reward, stored.answer, stored.action_count) == (True, 1.0, [x, y], 1)
    assert stored.clock_ok and stored.wall_ms >= 0 and stored.first_action_ms is not None


async def test_a_wrong_click_is_stored_as_wrong(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Geometry_Click")
    mask = (await database_sync_to_async(attempt.puzzle.load_masks)())["target"]
    ys, xs = (~mask).nonzero()
    socket = await connected(attempt.uid, session)
    await socket.send_to(text_data=batch(1, load(), ev("act.click", x=float(xs[0]), y=float(ys[0])), ev("act.submit")))
    await socket.receive_json_from()
    await socket.receive_json_from()
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.correct is False and 0.1 <= stored.reward <= 0.9 and stored.reason == "outside the target"


@pytest.mark.parametrize(
    "frame, problem",
    [
        ("not json", "not JSON"),
        (
            json.dumps({"type": "batch", "seq": 1, "events": [{"k": "act.submit", "t": 1.7e12, "correct": True}]}),
            "unknown field 'correct'",
        ),
        (
            json.dumps({"type": "batch", "seq": 1, "answer": [1, 2], "events": [{"k": "act.submit", "t": 1.7e12}]}),
            "unknown frame field 'answer'",
        ),
        (
            json.dumps(
                {"type": "batch", "seq": 1, "events": [{"k": "act.hold_end", "t": 1.7e12, "duration_ms": 9000}]}
            ),
            "unknown field 'duration_ms'",
        ),
        (
            json.dumps({"type": "batch", "seq": 1, "events": [{"k": "act.click", "t": 1.7e12, "x": 5000, "y": 3}]}),
            "field 'x' 5000 is outside",
        ),
        (json.dumps({"type": "batch", "seq": 0, "events": [{"k": "focus", "t": 1.7e12}]}), "seq must be"),
        (json.dumps({"type": "batch", "seq": 1, "events": [{"k": "verdict", "t": 1.7e12}]}), "unknown kind 'verdict'"),
        (json.dumps({"type": "batch", "seq": 1, "events": [{"k": "focus", "t": 1.7e12}] * 501}), "at most 500"),
    ],
)
async def test_bad_frames_get_an_error_naming_the_problem_and_store_nothing(open_attempt, frame, problem):
    attempt, session = await database_sync_to_async(open_attempt)()
    socket = await connected(attempt.uid, session)
    await socket.send_to(text_data=frame)
    reply = await socket.receive_json_from()
    assert reply["type"] == "error" and problem in reply["message"], reply
    stand_in = []
    if "seq" in reply:  # refused by number: its place is kept, so later batches still count
        assert await socket.receive_json_from() == {"type": "ack", "seq": reply["seq"]}
        stand_in = [(reply["seq"], 0, "refused")]
    following = len(stand_in) + 1
    await socket.send_to(text_data=batch(following, load()))  # the socket stays usable
    assert await socket.receive_json_from() == {"type": "ack", "seq": following}
    await socket.disconnect()
    assert await stored_events(attempt) == [*stand_in, (following, 0, "load")]


async def test_another_users_attempt_is_refused(open_attempt, person):
    attempt, _ = await database_sync_to_async(open_attempt)()
    _, intruder = await database_sync_to_async(person)("mallory")
    for session in (intruder, None):
        socket = socket_for(attempt.uid, session)
        await socket.connect()
        reply = await socket.receive_json_from()
        assert reply["code"] == "not_allowed"
        assert (await socket.receive_output())["type"] == "websocket.close"
        await socket.send_to(text_data=batch(1, load()))
        await socket.disconnect()
    assert await stored_events(attempt) == []


async def test_a_second_submit_is_refused_and_resends_are_harmless(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    total = str(attempt.puzzle.truth["sum"])
    socket = await connected(attempt.uid, session)
    first = batch(1, load(), ev("act.type", text=total), ev("act.submit"))
    await socket.send_to(text_data=first)
    assert [await socket.receive_json_from() for _ in range(2)][1]["type"] == "submitted"
    await socket.send_to(text_data=batch(2, ev("act.type", text="0"), ev("act.submit")))
    assert (await socket.receive_json_from())["code"] == "closed"
    await socket.send_to(text_data=first)  # a resend after a reconnect: acknowledged again
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.correct and stored.answer == total
    assert len(await stored_events(attempt)) == 3


async def test_batches_are_idempotent_and_acknowledged_contiguously(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Image_Recognition")
    cells = attempt.puzzle.truth["correct_patches"]
    socket = await connected(attempt.uid, session)
    toggles = [ev("act.toggle", cell=c) for c in cells]
    await socket.send_to(text_data=batch(2, *toggles, ev("act.submit")))  # batch 1 lost on the way
    assert await socket.receive_json_from() == {"type": "ack", "seq": 0}
    assert (await reload(attempt)).submitted_at is None  # not scored with a gap before the submit
    await socket.send_to(text_data=batch(1, load(), ev("act.toggle", cell=8 if 8 not in cells else 0)))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 2}
    assert (await socket.receive_json_from())["type"] == "submitted"
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.correct is False  # the extra cell from batch 1 counts: the order is by seq
    assert stored.action_count == len(cells) + 1


async def test_a_claimed_hold_that_the_server_did_not_see_is_refused(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Hold_Button")
    now = time.time() * 1000
    socket = await connected(attempt.uid, session)
    forged = batch(
        1,
        ev("load", now, w=1280, h=1080, scale=1, state="visible"),
        ev("act.hold_start", now),
        ev("act.hold_end", now + 60_000),
        ev("act.submit", now + 60_001),
    )
    await socket.send_to(text_data=forged)
    await socket.receive_json_from()
    await socket.receive_json_from()
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.correct is False
    assert stored.answer <= 0.5  # the claimed minute is refused; only what the server saw counts
    assert stored.clock_ok is False  # a minute claimed within a moment of opening


async def test_a_real_hold_gets_progress_from_the_server_and_counts(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Hold_Button")
    hold_ms = attempt.puzzle.truth["hold_time"] * 1000
    socket = await connected(attempt.uid, session)
    start = time.time() * 1000
    opened = ev("load", start - 5, w=1, h=1, scale=1, state="visible")
    await socket.send_to(text_data=batch(1, opened, ev("act.hold_start", start)))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    progress = []
    while not progress or progress[-1] < 1:
        frame = await socket.receive_json_from(timeout=hold_ms / 1000 + 2)
        progress.append(frame["progress"])
    assert progress == sorted(progress) and len(progress) > 3
    end = time.time() * 1000
    await socket.send_to(text_data=batch(2, ev("act.hold_end", end), ev("act.submit", end)))
    await socket.receive_json_from()
    await socket.receive_json_from()
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.correct, stored.reason
    assert stored.answer == pytest.approx((end - start) / 1000, abs=1e-3)


async def test_hidden_time_is_excluded_from_active_time(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    now = time.time() * 1000 - 3000  # the page opened three seconds ago...
    await opened_at(attempt, now - 100)
    socket = await connected(attempt.uid, session)
    await socket.send_to(
        text_data=batch(
            1,
            ev("load", now, w=1, h=1, scale=1, state="visible"),
            ev("visibilitychange", now + 500, state="hidden"),
            ev("visibilitychange", now + 2000, state="visible"),
            ev("act.type", now + 2500, text="3"),
            ev("act.submit", now + 2600),
        )
    )
    await socket.receive_json_from()
    await socket.receive_json_from()
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.clock_ok
    assert stored.wall_ms == pytest.approx(2600)
    assert stored.active_ms == pytest.approx(1100)
    assert stored.first_action_ms == pytest.approx(2500)


async def test_a_dropped_socket_loses_nothing_that_is_resent(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)()
    socket = await connected(attempt.uid, session)
    await socket.send_to(text_data=batch(1, load()))
    await socket.receive_json_from()
    second = batch(2, ev("focus"), ev("blur"))
    await socket.send_to(text_data=second)
    await socket.disconnect()  # dropped before the ack of 2 was read
    socket = await connected(attempt.uid, session)
    # The client resends everything unacknowledged, then goes on.
    for seq, frame in ((2, second), (3, batch(3, ev("focus")))):
        await socket.send_to(text_data=frame)
        assert await socket.receive_json_from() == {"type": "ack", "seq": seq}
    await socket.disconnect()
    assert await stored_events(attempt) == [(1, 0, "load"), (2, 0, "focus"), (2, 1, "blur"), (3, 0, "focus")]


async def test_a_batch_number_reused_with_other_events_is_refused_not_merged(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)()
    socket = await connected(attempt.uid, session)
    await socket.send_to(text_data=batch(1, load()))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    second_tab = await connected(attempt.uid, session)  # numbers on from what is stored, as the first
    await second_tab.send_to(text_data=batch(2, load()))
    assert await second_tab.receive_json_from() == {"type": "ack", "seq": 2}
    await socket.send_to(text_data=batch(2, load(), ev("act.click", x=1, y=1), ev("act.submit")))
    reply = await socket.receive_json_from()
    assert reply["code"] == "seq_conflict" and "two tabs" in reply["message"]
    await socket.disconnect()
    await second_tab.disconnect()
    assert await stored_events(attempt) == [(1, 0, "load"), (2, 0, "load")]
    assert (await reload(attempt)).submitted_at is None


async def test_only_what_was_entered_since_the_last_page_load_is_the_answer(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Object_Match")
    count = attempt.puzzle.truth["option_count"]
    socket = await connected(attempt.uid, session)
    # Two steps on, then a reload shows the first option again; one more step, and submit.
    await socket.send_to(text_data=batch(1, load(), ev("act.cycle", delta=1), ev("act.cycle", delta=1)))
    await socket.receive_json_from()
    await socket.send_to(text_data=batch(2, load(), ev("act.cycle", delta=-1), ev("act.submit")))
    await socket.receive_json_from()
    await socket.receive_json_from()
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.answer == count - 1 and stored.action_count == 3


async def test_a_page_clock_that_squeezes_time_is_not_trusted(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    socket = await connected(attempt.uid, session)
    now = time.time() * 1000
    await socket.send_to(text_data=batch(1, ev("load", now, w=1, h=1, scale=1, state="visible")))
    await socket.receive_json_from()
    await asyncio.sleep(1.3)  # the server sees time pass; the page claims almost none did
    await socket.send_to(text_data=batch(2, ev("act.type", now + 5, text="4"), ev("act.submit", now + 6)))
    await socket.receive_json_from()
    await socket.receive_json_from()
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.clock_ok is False and stored.wall_ms >= 1300  # timed by the server's clock instead


async def test_time_hidden_from_the_start_is_not_active(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    now = time.time() * 1000 - 1000  # the page opened in a background tab a second ago
    await opened_at(attempt, now - 100)
    socket = await connected(attempt.uid, session)
    await socket.send_to(
        text_data=batch(
            1,
            ev("load", now, w=1, h=1, scale=1, state="hidden"),
            ev("visibilitychange", now + 400, state="visible"),
            ev("act.type", now + 450, text="4"),
            ev("act.submit", now + 500),
        )
    )
    await socket.receive_json_from()
    await socket.receive_json_from()
    await socket.disconnect()
    stored = await reload(attempt)
    assert stored.clock_ok and stored.wall_ms == pytest.approx(500) and stored.active_ms == pytest.approx(100)


async def test_a_submitted_attempt_takes_no_new_socket(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    socket = await connected(attempt.uid, session)
    await socket.send_to(text_data=batch(1, load(), ev("act.type", text="1"), ev("act.submit")))
    await socket.receive_json_from()
    await socket.receive_json_from()
    await socket.disconnect()
    socket = socket_for(attempt.uid, session)
    await socket.connect()
    assert (await socket.receive_json_from())["code"] == "closed"
    await socket.disconnect()


@pytest.mark.parametrize(("text", "named"), [("4\x00", "NUL"), ("4\ud800", "lone surrogate")])
async def test_text_the_database_cannot_store_is_refused_not_stuck(open_attempt, text, named):
    """PostgreSQL stores neither a NUL nor an unpaired surrogate (sent as the JSON escape "\\ud800"):
    taken, either would make it refuse the whole batch statement and the page resend for ever."""
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    socket = await connected(attempt.uid, session)
    await socket.send_to(text_data=batch(1, load(), ev("act.type", text=text)))
    reply = await socket.receive_json_from()
    assert reply["code"] == "bad_frame" and named in reply["message"]
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}  # its place kept: nothing jams
    await socket.disconnect()


async def test_a_new_socket_scores_a_submit_that_waited_out_its_gap(open_attempt):
    """The socket that carried the submit died before the wait was over: the page's next socket
    (or any later request for the attempt) scores it and tells the page."""
    from annotation.live.frames import Batch
    from annotation.live.intake import GAP_WAIT_S, events_append

    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    then = time.time() * 1000 - (GAP_WAIT_S + 1) * 1000
    append = database_sync_to_async(events_append)
    await append(attempt_id=attempt.pk, batch=Batch(1, [load()]), received_ms=then)
    answer = [ev("act.type", then + 1, text="1"), ev("act.submit", then + 2)]
    await append(attempt_id=attempt.pk, batch=Batch(3, answer), received_ms=then + 2)
    socket = await connected(attempt.uid, session)
    assert await socket.receive_json_from() == {"type": "submitted", "verdict": None}
    await socket.disconnect()
    scored = await reload(attempt)
    assert scored.submitted_at is not None and scored.missing_batches == [2]


async def test_a_handshake_takes_no_turn_on_the_shared_sync_thread(open_attempt, person):
    """channels runs every thread-sensitive sync call of a process on one shared thread: under load
    it is a queue, and daphne drops a handshake not accepted within 5 s. With that thread held busy
    here, a socket is still accepted and acknowledged, and another person's is still refused."""
    attempt, session = await database_sync_to_async(open_attempt)()
    _, intruder = await database_sync_to_async(person)("mallory")
    release = threading.Event()
    busy = asyncio.ensure_future(sync_to_async(release.wait)())  # thread-sensitive: the shared thread
    try:
        socket = socket_for(attempt.uid, session)
        assert (await socket.connect(timeout=10))[0]
        await socket.send_to(text_data=batch(1, load()))
        assert await socket.receive_json_from(timeout=10) == {"type": "ack", "seq": 1}
        await socket.disconnect()
        refused = socket_for(attempt.uid, intruder)
        assert (await refused.connect(timeout=10))[0]  # accepted first, so the refusal can say why
        assert (await refused.receive_json_from(timeout=10))["code"] == "not_allowed"
        assert (await refused.receive_output(timeout=10))["code"] == 4403
        await refused.disconnect()
    finally:
        release.set()
        await busy
    assert [seq for seq, _, _ in await stored_events(attempt)] == [1]


async def test_the_pinned_autobahn_still_colours_its_frame_paths_debug_lines_by_these_names():
    """arena_site.asgi.quiet_autobahn_debug_lines replaces autobahn's hltype/hlval, which its frame
    path calls for every frame even with debug logging off. If an upgrade renames or drops them,
    the replacement silently saves nothing: this fails instead."""
    from autobahn.twisted import websocket
    from autobahn.websocket import protocol

    from arena_site.asgi import AUTOBAHN_COLOURING, _plain_type, _plain_value

    for method in (protocol.WebSocketProtocol.sendData, websocket.WebSocketAdapterProtocol.dataReceived):
        called = method.__code__.co_names
        assert set(AUTOBAHN_COLOURING) <= set(called), f"{method.__qualname__} no longer calls {AUTOBAHN_COLOURING}"
    for module in (protocol, websocket):  # replaced at ASGI start
        assert (module.hltype, module.hlval) == (_plain_type, _plain_value), module.__name__


async def test_the_objects_made_at_start_are_spared_from_garbage_collection():
    """arena_site.asgi freezes what starting made (gc.freeze), so a full collection on a busy web
    process walks only what was made since, not the whole of Django, daphne and twisted again."""
    import gc

    import arena_site.asgi  # noqa: F401  (imported as daphne imports it)

    assert gc.get_freeze_count() > 50_000


async def test_a_resend_is_answered_from_memory_only_when_it_is_what_this_socket_stored(open_attempt):
    """A batch number at or below the ack with other events is not acked from memory: it takes the
    usual path, which refuses it (two tabs numbering alike); the exact resend is acked at once."""
    attempt, session = await database_sync_to_async(open_attempt)()
    socket = await connected(attempt.uid, session)
    first = batch(1, load())
    await socket.send_to(text_data=first)
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    await socket.send_to(text_data=batch(1, load(), ev("act.click", x=1, y=1), ev("act.submit")))
    reply = await socket.receive_json_from()
    assert reply["type"] == "error" and reply["code"] == "seq_conflict"
    await socket.send_to(text_data=first)
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    await socket.disconnect()
    assert await stored_events(attempt) == [(1, 0, "load")]
    assert (await reload(attempt)).submitted_at is None


async def test_an_exact_resend_is_answered_without_the_database(open_attempt):
    """The resend of a batch this socket stored is answered from its memory: with the attempt's
    row locked by another transaction (where a write through intake waits), the ack still comes."""
    from django.db import connection, transaction

    attempt, session = await database_sync_to_async(open_attempt)()
    socket = await connected(attempt.uid, session)
    first = batch(1, load())
    await socket.send_to(text_data=first)
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    locked, release = threading.Event(), threading.Event()

    def hold_the_row() -> None:
        with transaction.atomic():
            Attempt.objects.select_for_update().get(pk=attempt.pk)
            locked.set()
            release.wait(30)
        connection.close()

    holder = threading.Thread(target=hold_the_row)
    holder.start()
    try:
        assert await asyncio.to_thread(locked.wait, 10)
        await socket.send_to(text_data=first)
        assert await socket.receive_json_from(timeout=5) == {"type": "ack", "seq": 1}
    finally:
        release.set()
        await asyncio.to_thread(holder.join)
    await socket.disconnect()
