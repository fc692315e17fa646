"""A hosted attempt's pin (its puzzle at the peer) and its one check: the proxy forwards one
check_answer per attempt (a multi-step family: one sequence, step after step while the peer says
`continue`), keeps the peer's replies verbatim, and copies the peer's verdict to the attempt. The
browser's word is never taken: not its `correct`, not its `elapsed_time`, not its puzzle id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.hosted.client import PeerClient, Reply
from annotation.hosted.dialects import Address, Dialect, get_dialect
from annotation.models import Attempt, Benchmark, HostedCheck

ALREADY_ANSWERED = "This puzzle was already answered: its verdict is kept, a second answer is not checked."


@dataclass(frozen=True)
class Pin:
    """What the proxy needs of an attempt, loaded once per process (none of it changes)."""

    attempt_id: int
    benchmark: str
    base_url: str
    dialect: Dialect
    address: Address
    puzzle_id: str
    page: str  # the peer's own page for this puzzle: path and query
    payload: dict[str, Any] | None  # the stored get_puzzle answer, truth stripped (a peer without addresses)
    assets: dict[str, Any]

    @property
    def family(self) -> str:
        return self.address.family

    @property
    def stateful(self) -> bool:
        return self.family in self.dialect.stateful

    @property
    def multi_step(self) -> bool:
        return self.family in self.dialect.multi_step

    def client(self) -> PeerClient:
        return PeerClient(self.base_url, self.dialect)


def pin_of(uid: str) -> Pin | None:
    """The attempt's pin, or None when it is no hosted attempt."""
    attempt = Attempt.objects.select_related("puzzle").filter(uid=uid).first()
    hosted = attempt.puzzle.public.get("hosted") if attempt else None
    if attempt is None or not isinstance(hosted, dict) or "puzzle_id" not in hosted:
        return None
    benchmark = Benchmark.objects.filter(name=hosted["benchmark"]).first()
    if benchmark is None:
        return None
    return Pin(
        attempt_id=attempt.pk,
        benchmark=benchmark.name,
        base_url=benchmark.base_url.rstrip("/"),
        dialect=get_dialect(benchmark.dialect),
        address=Address(**hosted["address"]),
        puzzle_id=str(hosted["puzzle_id"]),
        page=str(hosted.get("page") or "/"),
        payload=attempt.puzzle.public.get("payload"),
        assets=benchmark.assets,
    )


def check_started(pin: Pin) -> bool:
    """Whether the attempt's check was forwarded (its stateful puzzle must not be fetched afresh)."""
    return HostedCheck.objects.filter(attempt_id=pin.attempt_id).exists()


def forward_check(pin: Pin, answer: Any) -> Reply:
    """Forward the page's answer to the peer when this attempt may still be checked; keep the reply.

    Under the attempt's row lock, so two posts at once (a double click, two tabs) forward one. A
    peer that does not answer raises PeerUnreachable and nothing is kept: the page may post again."""
    with transaction.atomic():
        locked = Attempt.objects.select_for_update(of=("self",)).select_related("hosted_check")
        attempt = locked.get(pk=pin.attempt_id)  # one query: the attempt and its check so far, if any
        try:
            record = attempt.hosted_check
        except HostedCheck.DoesNotExist:
            record = HostedCheck(attempt=attempt)
        if record.finished_at is not None or attempt.is_closed:
            return Reply(409, {"error": ALREADY_ANSWERED})
        reply = pin.client().check(pin.family, pin.puzzle_id, answer)
        record.steps.append({"answer": answer, "status": reply.status, "reply": reply.body, "at": _now()})
        if not (pin.multi_step and _continues(reply)):
            _finish(pin, record, attempt, reply)
        record.save()
    return reply


def _continues(reply: Reply) -> bool:
    return reply.error() is None and isinstance(reply.body, dict) and reply.body.get("status") == "continue"


def _finish(pin: Pin, record: HostedCheck, attempt: Attempt, reply: Reply) -> None:
    body = reply.body if isinstance(reply.body, dict) else {}
    correct = reply.error() is None and body.get("correct") is True
    if pin.multi_step:
        correct = correct and body.get("status") == "completed"
    record.correct, record.finished_at = correct, timezone.now()
    answers = [step["answer"] for step in record.steps]
    attempt.answer = answers if pin.multi_step else answers[-1]
    attempt.correct = correct
    attempt.reason = _reason(pin, reply, correct)[:300]
    attempt.submitted_at = record.finished_at
    attempt.save(update_fields=["answer", "correct", "reason", "submitted_at"])


def _reason(pin: Pin, reply: Reply, correct: bool) -> str:
    """The verdict in words: the peer's own `message` or error, never its `correct_answer`."""
    said = reply.error() or (reply.body.get("message") if isinstance(reply.body, dict) else None)
    verdict = "correct" if correct else "not correct"
    return f"{pin.benchmark}'s verdict: {verdict}" + (f" ({said})" if said else "")


def _now() -> str:
    return timezone.now().isoformat()
