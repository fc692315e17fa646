"""A job and its chunks: what the workers were asked to do, how far they are, what failed."""

from __future__ import annotations

from django.db import models

# What a job's items are, where a bare item (an id) would not say it.
ITEMS_ARE = {"replay": "puzzles ", "trajectories": "attempts ", "agent": "rollouts "}


class Job(models.Model):
    """One command's (or one button's) heavy work: `total` items in chunks; `done` counts the items
    handled so far, failed ones included (`failed` of them)."""

    class State(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"  # a chunk failed as a whole (its error is named on it)
        CANCELLED = "cancelled"

    kind = models.CharField(max_length=32, help_text="replay, generate, trajectories")
    label = models.CharField(max_length=300, help_text="what it works on, in words")
    params = models.JSONField(default=dict, blank=True, help_text="what each chunk needs besides its items")
    task = models.CharField(max_length=200, blank=True, help_text="the Celery task that runs one chunk, by name")
    started_by = models.CharField(max_length=150, help_text="a staff member's name, or shell:<login> for a command")
    total = models.PositiveIntegerField()
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=16, choices=State.choices, default=State.RUNNING, db_index=True)
    cancel_requested = models.BooleanField(default=False)
    error = models.CharField(max_length=500, blank=True, help_text="why the job failed past its chunks (its last step)")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk}: {self.done}/{self.total}"

    @property
    def percent(self) -> int:
        return 100 * self.done // self.total if self.total else 100


class Chunk(models.Model):
    """A few items of a job, one Celery task. A worker holds it while it runs and says so every few
    seconds (`heartbeat_at`); a delivery that finds it held by a silent holder takes it over."""

    class State(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField(help_text="1, 2, ... within its job")
    items = models.JSONField(help_text="what the chunk works on: puzzle ids, [type, index] pairs, attempt ids")
    size = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    failures = models.JSONField(default=list, blank=True, help_text='[{"item": name, "reason": why}]')
    error = models.CharField(max_length=500, blank=True, help_text="why the chunk as a whole failed")
    holder = models.CharField(max_length=200, blank=True, help_text="host:pid:task of the worker running it")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    deliveries = models.PositiveIntegerField(default=0, help_text="times a worker took it up (2+: redelivered)")
    lost = models.PositiveIntegerField(default=0, help_text="times it was taken over from a holder gone silent")
    sent_at = models.DateTimeField(null=True, blank=True, help_text="when its task was last sent")
    sent_to = models.CharField(max_length=64, blank=True, help_text="the run id of the Redis it was sent to")

    class Meta:
        ordering = ["job", "number"]
        constraints = [models.UniqueConstraint(fields=["job", "number"], name="chunk_number_in_job")]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        """The chunk by its first and last item, as staff look for it: "chunk 2 (puzzles 16 … 20)"."""
        first, last = _item_name(self.items[0]), _item_name(self.items[-1])
        span = first if first == last else f"{first} … {last}"
        return f"chunk {self.number} ({ITEMS_ARE.get(self.job.kind, '')}{span})"


def _item_name(item: object) -> str:
    if isinstance(item, list):
        return "#".join(map(str, item))
    return str(item)
