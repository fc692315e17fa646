"""A hosted attempt's pin (its puzzle at the peer) and its one check: the proxy forwards one
check_answer per attempt (a multi-step family: one sequence, step after step while the peer says
`continue`) and keeps the peer's replies verbatim; the final one is the attempt's verdict, taken by
the scoring entry (live/intake.py attempt_check_answered, live/scoring.py) under the same row lock.
The browser's word is never taken: not its `correct`, not its `elapsed_time`, not its puzzle id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.hosted.client import PeerClient, Reply
from annotation.hosted.dialects import Address, Dialect, get_dialect
from annotation.live.intake import attempt_check_answered, shows_verdict
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


@dataclass(frozen=True)
class Forwarded:
    """The peer's reply to one post, whether it ended the attempt's check, and whether the attempt
    shows its verdict to the person (live/intake.py shows_verdict): the page hears it only then."""

    reply: Reply
    final: bool = False
    show_verdict: bool = False


def forward_check(pin: Pin, answer: Any) -> Forwarded:
    """Forward the page's answer to the peer when this attempt may still be checked; keep the reply.

    Under the attempt's row lock, so two posts at once (a double click, two tabs) forward one. A
    peer that does not answer raises PeerUnreachable and nothing is kept: the page may post again.
    The final reply goes to the scoring entry under the same lock: the attempt is scored now if its
    page's submit is already held, else when it comes (live/scoring.py, module docstring)."""
    with transaction.atomic():
        locked = Attempt.objects.select_for_update(of=("self",)).select_related("hosted_check", "puzzle", "study")
        attempt = locked.get(pk=pin.attempt_id)  # one query: the attempt and its check so far, if any
        try:
            record = attempt.hosted_check
        except HostedCheck.DoesNotExist:
            record = HostedCheck(attempt=attempt)
        if record.finished_at is not None or attempt.is_closed:
            return Forwarded(Reply(409, {"error": ALREADY_ANSWERED}))
        reply = pin.client().check(pin.family, pin.puzzle_id, answer)
        step = {"answer": answer, "status": reply.status, "reply": reply.body, "at": _now()}
        record.steps.append({**step, "sequence": True} if pin.multi_step else step)
        final = not (pin.multi_step and _continues(reply))
        if final:
            record.correct, record.finished_at = _correct(pin, reply), timezone.now()
        record.save()
        if final:
            attempt_check_answered(attempt=attempt)
    return Forwarded(reply, final, shows_verdict(attempt))


def _continues(reply: Reply) -> bool:
    return reply.error() is None and isinstance(reply.body, dict) and reply.body.get("status") == "continue"


def _correct(pin: Pin, reply: Reply) -> bool:
    """The peer's verdict: its own `correct`, and for a multi-step family its `completed`."""
    body = reply.body if isinstance(reply.body, dict) else {}
    correct = reply.error() is None and body.get("correct") is True
    return correct and body.get("status") == "completed" if pin.multi_step else correct


def _now() -> str:
    return timezone.now().isoformat()
