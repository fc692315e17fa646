"""Who acts on the live page (participants), what they act on (attempts) and what they did (events)."""
import secrets

from django.conf import settings
from django.db import models

from puzzles.models import Puzzle


def new_attempt_uid() -> str:
    return secrets.token_hex(12)


class Participant(models.Model):
    """A person, an agent or the replay of reference answers: each acts through a user session."""

    class Kind(models.TextChoices):
        HUMAN = "human", "human"
        AGENT = "agent", "agent"
        REPLAY = "replay", "replay"

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.HUMAN)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant")
    label = models.CharField(max_length=200, blank=True, help_text="agent model or provider, for agents")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.kind}:{self.label or self.user}"


class Attempt(models.Model):
    """One puzzle shown to one participant. The verdict fields are filled by the server on submit."""

    uid = models.CharField(max_length=32, unique=True, default=new_attempt_uid, editable=False)
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="attempts")
    puzzle = models.ForeignKey(Puzzle, on_delete=models.PROTECT, related_name="attempts")
    created_at = models.DateTimeField(auto_now_add=True)
    acked_seq = models.PositiveIntegerField(default=0, help_text="highest contiguous batch stored")
    max_seq = models.PositiveIntegerField(default=0, help_text="highest batch stored, gaps or not")
    # The verdict, derived on the server from the stored events.
    submitted_at = models.DateTimeField(null=True, blank=True, db_index=True)
    answer = models.JSONField(null=True, blank=True)
    correct = models.BooleanField(null=True)
    reward = models.FloatField(null=True)
    reason = models.CharField(max_length=300, blank=True)
    wall_ms = models.FloatField(null=True, help_text="page shown to submit, by the page's clock")
    active_ms = models.FloatField(null=True, help_text="wall time minus time the page was hidden")
    first_action_ms = models.FloatField(null=True, help_text="page shown to first semantic action")
    action_count = models.PositiveIntegerField(null=True, help_text="semantic actions before submit")
    clock_ok = models.BooleanField(null=True, help_text="the page's clock agreed with the server's receive times")

    class Meta:
        indexes = [models.Index(fields=["puzzle", "submitted_at"])]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"attempt {self.uid} on {self.puzzle_id}"

    @property
    def is_submitted(self) -> bool:
        return self.submitted_at is not None


class Event(models.Model):
    """One logged event (docs/events.md). Stored once per (attempt, seq, index)."""

    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField(help_text="the batch number it arrived in")
    index = models.PositiveSmallIntegerField(help_text="its place in the batch")
    kind = models.CharField(max_length=24)
    t = models.FloatField(help_text="the page's timestamp, epoch ms (performance.timeOrigin based)")
    received = models.FloatField(help_text="server receive time of its batch, epoch ms")
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["attempt", "seq", "index"], name="event_unique_in_batch")]
        ordering = ["attempt", "seq", "index"]

    def __str__(self) -> str:
        return f"{self.attempt_id}#{self.seq}.{self.index} {self.kind}"
