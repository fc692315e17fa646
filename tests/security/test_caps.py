"""Bounds on what one attempt, one person or one request can make the server hold or parse: events
and bytes per attempt, one open flag per person per puzzle, JSON nesting, control characters. All
through the real ASGI app (the socket) or the Django test client."""

import json
import threading
import time

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test import Client

from annotation.live.frames import ACTIONS_PAST_LIMIT, MAX_ATTEMPT_BYTES, MAX_ATTEMPT_EVENTS, MAX_FRAME_BYTES
from annotation.models import Attempt, Event, Flag
from annotation.review.labels import flag_raise
from tests.live_stream import Hand, batch, socket_for

pytestmark = pytest.mark.django_db(transaction=True)


async def connected(attempt, session):
    socket = socket_for(attempt.uid, session)
    assert (await socket.connect())[0]
    return socket


async def send(socket, frame: str, replies: int = 1) -> list[dict]:
    await socket.send_to(text_data=frame)
    return [await socket.receive_json_from(timeout=10) for _ in range(replies)]


def moves(t: float, count: int) -> list[dict]:
    return [{"k": "pointermove", "t": t + i * 0.01, "x": 100.0, "y": 100.0, "pointer": "mouse"} for i in range(count)]


async def stored(attempt) -> tuple[Attempt, int]:
    found = await database_sync_to_async(Attempt.objects.get)(pk=attempt.pk)
    return found, await database_sync_to_async(Event.objects.filter(attempt=attempt).count)()


@pytest.mark.asyncio
async def test_a_flood_past_the_event_limit_gets_clear_errors_and_the_attempt_still_submits(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    socket = await connected(attempt, session)
    now = time.time() * 1000
    load = {"k": "load", "t": now, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}
    full = MAX_ATTEMPT_EVENTS // 500
    for seq in range(1, full + 1):  # exactly the limit: all kept
        events = ([load] if seq == 1 else []) + moves(now + seq, 500 - (seq == 1))
        assert await send(socket, batch(seq, *events)) == [{"type": "ack", "seq": seq}]
    over = await send(socket, batch(full + 1, *moves(now + 2000, 500)), replies=2)
    assert over[0] == {"type": "ack", "seq": full + 1}  # acknowledged: the page moves on
    assert over[1]["code"] == "limit" and over[1]["seq"] == full + 1
    assert f"limit of {MAX_ATTEMPT_EVENTS} events" in over[1]["message"] and "500 of the 500" in over[1]["message"]
    # The person answers: the raw input is dropped, the actions are kept, the submit is scored.
    hand = Hand(attempt.puzzle, now + 3000).press_control("text").type(str(attempt.puzzle.truth["sum"]))
    answer = hand.press_control("submit", {"k": "act.submit"}).events[1:]
    replies = await send(socket, batch(full + 2, *answer), replies=3)
    assert [r["type"] for r in replies] == ["ack", "submitted", "error"] and replies[2]["code"] == "limit"
    await socket.disconnect()
    scored, rows = await stored(attempt)
    kept = [e for e in answer if e["k"].startswith("act.")]
    assert rows == MAX_ATTEMPT_EVENTS + len(kept)
    assert scored.correct is True and scored.answer == str(attempt.puzzle.truth["sum"])
    # Its clicks and keys were dropped, so nothing shows a hand behind its actions any more.
    assert scored.input_ok is False and scored.input_problem.startswith("raw input past the attempt's limit")


@pytest.mark.asyncio
async def test_past_the_byte_limit_actions_are_kept_up_to_a_ceiling_and_acknowledgement_never_stalls(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    socket = await connected(attempt, session)
    now = time.time() * 1000
    seq = 0

    def padded(*events: dict) -> str:  # a frame just under the frame limit, of whitespace mostly
        frame = batch(seq, *events)
        return frame[:-1] + " " * (MAX_FRAME_BYTES - 100 - len(frame)) + "}"

    while (seq := seq + 1) * (MAX_FRAME_BYTES - 100) <= MAX_ATTEMPT_BYTES:
        assert await send(socket, padded({"k": "beat", "t": now + seq})) == [{"type": "ack", "seq": seq}]
    over = await send(socket, padded({"k": "beat", "t": now + seq}), replies=2)
    assert over[0] == {"type": "ack", "seq": seq} and over[1]["code"] == "limit"
    before = (await stored(attempt))[1]
    typed = [{"k": "act.type", "t": now + 1000 + i, "text": str(i)} for i in range(500)]
    first_flood = seq + 1
    for _ in range(2 * ACTIONS_PAST_LIMIT // 500):  # actions past the limit: kept up to a ceiling
        seq += 1
        await socket.send_to(text_data=batch(seq, *typed))
    frames = []
    while {"type": "ack", "seq": seq} not in frames:
        frames.append(await socket.receive_json_from(timeout=10))
    frames.append(await socket.receive_json_from(timeout=10))  # the last one's error: it is past the ceiling
    assert [f["seq"] for f in frames if f["type"] == "ack"] == list(range(first_flood, seq + 1))  # no stall
    refused = [f["seq"] for f in frames if f["type"] == "error" and f["code"] == "limit"]
    assert first_flood < refused[0] and refused == list(range(refused[0], seq + 1))
    assert len(refused) + sum(f["type"] == "ack" for f in frames) == len(frames)
    after = (await stored(attempt))[1]
    assert after - before <= ACTIONS_PAST_LIMIT  # half the flood stored nothing
    right = str(attempt.puzzle.truth["sum"])
    seq += 1
    replies = await send(
        socket, batch(seq, {"k": "act.type", "t": now + 5000, "text": right}, {"k": "act.submit", "t": now + 5001})
    )
    assert replies == [{"type": "ack", "seq": seq}]
    assert (await socket.receive_json_from())["type"] == "submitted"
    await socket.disconnect()
    scored, rows = await stored(attempt)
    assert rows <= before + ACTIONS_PAST_LIMIT + 2
    assert scored.correct and scored.answer == right  # a short answer and its submit still fit: finished


@pytest.mark.asyncio
async def test_deeply_nested_json_gets_an_error_frame_and_the_socket_stays_usable(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)()
    socket = await connected(attempt, session)
    for frame in (
        "[" * 100_000 + "]" * 100_000,
        json.dumps({"type": "batch", "seq": 1, "events": [[[[[[[[[1]]]]]]]]]}),
    ):
        reply = await send(socket, frame)
        assert reply == [{"type": "error", "code": "bad_frame", "message": "frame is nested deeper than 8 levels"}]
    load = {"k": "load", "t": time.time() * 1000, "w": 1, "h": 1, "scale": 1, "state": "visible"}
    assert await send(socket, batch(1, load)) == [{"type": "ack", "seq": 1}]
    await socket.disconnect()


def signed_in(attempt) -> tuple[Client, dict]:
    client = Client()
    client.force_login(attempt.participant.user)
    client.get(f"/play/{attempt.uid}/")
    return client, {"X-CSRFToken": client.cookies["csrftoken"].value}


def test_deeply_nested_json_over_http_is_a_clear_400(open_attempt):
    attempt, _ = open_attempt()
    client, headers = signed_in(attempt)
    nested = "[" * 50_000 + "]" * 50_000
    # The fallback's body is a list of frames, one level above a frame's own limit; a flag is one object.
    for url, depth in ((f"/attempts/{attempt.uid}/events/", 9), (f"/attempts/{attempt.uid}/flag/", 8)):
        reply = client.post(url, nested, content_type="application/json", headers=headers)
        assert reply.status_code == 400 and f"nested deeper than {depth} levels" in reply.content.decode(), url
    assert Flag.objects.count() == 0 and Event.objects.count() == 0


def test_control_characters_in_a_flag_note_are_a_clear_400(open_attempt):
    attempt, _ = open_attempt()
    client, headers = signed_in(attempt)
    url = f"/attempts/{attempt.uid}/flag/"
    for note in ("nul \x00 here", "bell \x07", "escape \x1b[31m"):
        reply = client.post(
            url, json.dumps({"reason": "broken", "note": note}), content_type="application/json", headers=headers
        )
        assert reply.status_code == 400 and "control characters" in reply.json()["error"]
    list_body = client.post(url, "[1, 2]", content_type="application/json", headers=headers)
    assert list_body.status_code == 400 and "JSON object" in list_body.json()["error"]
    fine = client.post(
        url,
        json.dumps({"reason": "broken", "note": "two lines\nand a\ttab"}),
        content_type="application/json",
        headers=headers,
    )
    assert fine.status_code == 201 and Flag.objects.get().note == "two lines\nand a\ttab"


def test_a_thousand_flags_become_one(open_attempt):
    attempt, _ = open_attempt()
    client, headers = signed_in(attempt)
    url = f"/attempts/{attempt.uid}/flag/"
    statuses = [
        client.post(
            url, json.dumps({"reason": "broken", "note": f"#{i}"}), content_type="application/json", headers=headers
        ).status_code
        for i in range(1000)
    ]
    assert statuses == [201] + [200] * 999
    assert list(Flag.objects.values_list("note", "status")) == [("#0", "open")]
    Flag.objects.update(status=Flag.Status.DISMISSED)  # once dealt with, the person may flag it again
    assert (
        client.post(url, json.dumps({"reason": "other"}), content_type="application/json", headers=headers).status_code
        == 201
    )


def test_flags_raised_at_the_same_moment_are_still_one(open_attempt):
    attempt, _ = open_attempt()
    barrier = threading.Barrier(8)
    raised = []

    def flag():
        try:
            barrier.wait()
            raised.append(flag_raise(attempt=Attempt.objects.get(pk=attempt.pk), reason="ambiguous").pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=flag) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(raised) == 8 and len(set(raised)) == 1 and Flag.objects.count() == 1
