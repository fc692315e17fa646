"""A batch that never arrives never leaves an attempt unscorable: a submit behind it is scored on
what came (after a bounded wait, or at once when a reload made the missing batch irrelevant), and
the attempt names what was missing."""

import asyncio
import contextlib
import http.cookiejar
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from annotation.live import intake
from annotation.live.intake import GAP_WAIT_S, attempt_resolve_gap
from annotation.models import Attempt
from tests.faults.harness import tally
from tests.live_stream import batch, ev, load, send, socket_for

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def test_a_submit_behind_a_missing_batch_is_scored_after_the_wait(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    answer = str(attempt.puzzle.truth["sum"])
    send(attempt, 1, load(now), at=now)
    waiting = send(attempt, 3, ev("act.type", now + 2, text=answer), ev("act.submit", now + 3), at=now + 3)
    assert (waiting.acked, waiting.submitted) == (1, False)  # batch 2 may still come
    assert not attempt_resolve_gap(attempt_id=attempt.pk, now_ms=now + 3 + GAP_WAIT_S * 1000 - 100)
    assert attempt_resolve_gap(attempt_id=attempt.pk, now_ms=now + 3 + GAP_WAIT_S * 1000 + 1)
    scored = Attempt.objects.get(pk=attempt.pk)
    assert scored.submitted_at is not None and scored.answer == answer and scored.correct
    assert scored.missing_batches == [2]


def test_a_complete_answer_after_a_reload_is_scored_at_once_despite_an_earlier_gap(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    send(attempt, 1, load(now), at=now)
    # Batch 2 (the first page's last typing) is lost; the person reloads and answers again.
    appended = send(
        attempt,
        3,
        load(now + 1000),
        ev("act.type", now + 2000, text=str(attempt.puzzle.truth["sum"])),
        ev("act.submit", now + 2100),
        at=now + 2100,
    )
    assert appended.submitted and appended.correct
    scored = Attempt.objects.get(pk=attempt.pk)
    assert scored.missing_batches == [2] and scored.action_count == 1


def test_the_sweep_scores_what_no_socket_is_left_to_resolve(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    past = time.time() * 1000 - (GAP_WAIT_S + 5) * 1000  # the page left long ago
    send(attempt, 1, load(past), at=past)
    send(attempt, 3, ev("act.type", past + 1, text="3"), ev("act.submit", past + 2), at=past + 2)
    call_command("resolve_gaps")
    assert Attempt.objects.get(pk=attempt.pk).missing_batches == [2]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_socket_scores_a_gapped_submit_itself_and_tells_the_page(open_attempt, monkeypatch):
    from channels.db import database_sync_to_async

    from annotation.live import consumers

    monkeypatch.setattr(consumers, "GAP_WAIT_S", 0.1)
    monkeypatch.setattr(intake, "GAP_WAIT_S", 0.1)
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    now = time.time() * 1000
    socket = socket_for(attempt.uid, session)
    assert (await socket.connect())[0]
    await socket.send_to(text_data=batch(1, load(now)))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    await socket.send_to(text_data=batch(3, ev("act.type", now + 1, text="1"), ev("act.submit", now + 2)))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}  # batch 2 is still missing
    assert await socket.receive_json_from(timeout=5) == {"type": "submitted", "verdict": None}
    await socket.disconnect()
    scored = await database_sync_to_async(Attempt.objects.get)(pk=attempt.pk)
    assert scored.submitted_at is not None and scored.missing_batches == [2]


# --- with the system's own processes: no command, no socket left to resolve it ----------------------

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


@contextlib.contextmanager
def _celery(service: str, env: dict[str, str], tmp_path, *extra: str):
    """A compose service's command as composed (this environment's celery), with its log."""
    command = [str(Path(sys.executable).with_name("celery")), *COMPOSE[service]["command"][1:], *extra]
    if "--schedule" in command:  # beat's state file: the test's own
        command[command.index("--schedule") + 1] = str(tmp_path / "celerybeat-schedule")
    log = (tmp_path / f"{service}.log").open("w+")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        yield process, log
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _waits_for(log, words: str, process: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        log.seek(0)
        text = log.read()
        if words in text:
            return
        assert process.poll() is None, text[-3000:]
        time.sleep(0.2)
    raise AssertionError(f"no {words!r} in {timeout_s:g} s")


def _scored_within(attempt, since: float, ceiling_s: float) -> float:
    """Seconds from `since` (time.monotonic) until the attempt is scored; the ceiling is the
    promise itself (GAP_WAIT_S + 15 s), past it the test fails."""
    while time.monotonic() - since < ceiling_s:
        attempt.refresh_from_db()
        if attempt.submitted_at is not None:
            return time.monotonic() - since
        time.sleep(0.2)
    raise AssertionError(f"attempt {attempt.uid} not scored {ceiling_s:g} s after its gapped submit")


def _post(base: str, uid: str, session: str, frame: dict) -> list[dict]:
    """A batch by the HTTP fallback, as the page posts it (the CSRF token of the page's cookie)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.addheaders = [("Cookie", f"sessionid={session}")]
    opener.open(f"{base}/play/{uid}/", timeout=10).read()
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    request = urllib.request.Request(
        f"{base}/attempts/{uid}/events/",
        data=json.dumps(frame).encode(),
        headers={
            "Content-Type": "application/json",
            "X-CSRFToken": token,
            "Cookie": f"sessionid={session}; csrftoken={token}",
        },
    )
    return json.loads(urllib.request.urlopen(request, timeout=10).read())


def _gapped_frames(attempt) -> tuple[dict, dict]:
    """Batch 1 (the load) and batch 3 (the right answer and its submit); batch 2 never comes."""
    now = time.time() * 1000
    point = attempt.puzzle.truth["point"]
    first = {
        "type": "batch",
        "seq": 1,
        "events": [{"k": "load", "t": now, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}],
    }
    answer = [{"k": "act.click", "t": now + 100, "x": point[0], "y": point[1]}, {"k": "act.submit", "t": now + 101}]
    return first, {"type": "batch", "seq": 3, "events": answer}


@pytest.mark.browser
def test_gapped_submits_whose_page_is_gone_are_scored_by_the_beat_and_a_worker(puzzles_of, annotator, tmp_path):
    """No command run: the compose beat and worker commands against the test's database and Redis.
    One submit came by the HTTP fallback (nothing is left to resolve it), the other by a socket whose
    web process was killed during the wait. Both are scored within GAP_WAIT_S + 15 s."""
    import websockets

    from annotation.agents.server import daphne_command
    from tests.faults import report
    from tests.faults.harness import Daphne
    from tests.faults.test_recovery import _attempts

    (by_post, by_socket), (post_session, socket_session), _ = _attempts(puzzles_of, annotator, count=2)
    row = report.row("gapped submits, page gone: beat + worker score them", "recovery: from the submit to its score")
    _, env = daphne_command("127.0.0.1", 0)
    ceiling = GAP_WAIT_S + 15
    with (
        _celery("worker", env, tmp_path, "--pool", "solo") as (worker, worker_log),
        _celery("beat", env, tmp_path) as (
            beat,
            beat_log,
        ),
    ):
        _waits_for(worker_log, "ready.", worker)
        _waits_for(beat_log, "beat: Starting", beat)
        server = Daphne().start()
        try:
            first, submit = _gapped_frames(by_post)
            assert _post(server.url, by_post.uid, post_session, first) == [{"type": "ack", "seq": 1}]
            assert _post(server.url, by_post.uid, post_session, submit) == [{"type": "ack", "seq": 1}]
            posted = time.monotonic()

            async def socket_then_kill() -> float:
                url = server.url.replace("http", "ws") + f"/ws/attempts/{by_socket.uid}/"
                headers = {"Cookie": f"sessionid={socket_session}", "Origin": server.url}
                first, submit = _gapped_frames(by_socket)
                async with websockets.connect(url, additional_headers=headers) as socket:
                    await socket.send(json.dumps(first))
                    assert json.loads(await socket.recv()) == {"type": "ack", "seq": 1}
                    await socket.send(json.dumps(submit))
                    assert json.loads(await socket.recv()) == {"type": "ack", "seq": 1}
                    sent = time.monotonic()
                    server.kill()  # the socket, and its own wait for the gap, die with the process
                return sent

            sent = asyncio.run(socket_then_kill())
            waits = [_scored_within(by_post, posted, ceiling), _scored_within(by_socket, sent, ceiling)]
        finally:
            server.stop()
    for attempt, waited in zip((by_post, by_socket), waits):
        row.add(tally(attempt, 0), scored=attempt.submitted_at is not None, recovery_s=waited)
        assert attempt.missing_batches == [2] and attempt.correct


def test_after_a_gap_the_reloaded_pages_complete_answer_wins_over_the_waiting_submit(open_attempt):
    """The first page's typing (batch 2) is lost and its submit (batch 3) waits behind it; the
    person reloads and answers again in full: that answer is scored at once, not the first page's."""
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    answer = str(attempt.puzzle.truth["sum"])
    send(attempt, 1, load(now), at=now)
    waiting = send(attempt, 3, ev("act.submit", now + 2000), at=now + 2000)  # batch 2 held the typing
    assert not waiting.submitted
    send(attempt, 4, load(now + 3000), at=now + 3000)
    reloaded = send(attempt, 5, ev("act.type", now + 4000, text=answer), ev("act.submit", now + 4100), at=now + 4100)
    assert reloaded.submitted and reloaded.correct
    scored = Attempt.objects.get(pk=attempt.pk)
    assert scored.answer == answer and scored.missing_batches == [2]


@pytest.mark.parametrize("view", ["annotation:play", "annotation:play-data"])
def test_a_gapped_submit_is_scored_when_the_attempts_page_loads(open_attempt, view):
    """A submit whose page is gone (sent by the HTTP fallback, or its socket died) waited out its
    gap; no sweep has run: the attempt's next page load scores it, and the page is told."""
    from django.test import Client
    from django.urls import reverse

    attempt, session = open_attempt("Dice_Count")
    past = time.time() * 1000 - (GAP_WAIT_S + 5) * 1000
    answer = str(attempt.puzzle.truth["sum"])
    send(attempt, 1, load(past), at=past)
    send(attempt, 3, ev("act.type", past + 1, text=answer), ev("act.submit", past + 2), at=past + 2)
    assert Attempt.objects.get(pk=attempt.pk).submitted_at is None  # still waiting
    client = Client()
    client.cookies["sessionid"] = session
    response = client.get(reverse(view, kwargs={"uid": attempt.uid}))
    assert response.status_code == 200
    scored = Attempt.objects.get(pk=attempt.pk)
    assert scored.submitted_at is not None and scored.correct and scored.missing_batches == [2]
    shown = response.json() if view.endswith("data") else response.context["page_data"]
    assert shown["submitted"] is True
