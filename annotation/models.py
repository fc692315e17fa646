"""Who acts on the live page (participants), what they act on (attempts) and what they did (events)."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

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


def new_token() -> str:
    return secrets.token_hex(10)


COMPLETION_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud or typed without doubt


def new_completion_code() -> str:
    """A completion code as crowd platforms show them: eight capitals and digits (C7K2M9QX)."""
    return "".join(secrets.choice(COMPLETION_ALPHABET) for _ in range(8))


class Study(models.Model):
    """A human-baseline study: which puzzles, how many per person, how many people per puzzle."""

    class Order(models.TextChoices):
        SHUFFLED = "shuffled", "seeded shuffle"
        BLOCKED = "blocked", "blocked by type"
        INTERLEAVED = "interleaved", "interleaved types"

    class Status(models.TextChoices):
        # draft: being set up, editable, nobody joins; open: people join and work; paused: nobody
        # new joins and nobody gets new work until it opens again; closed: over.
        DRAFT = "draft", "draft"
        OPEN = "open", "open"
        PAUSED = "paused", "paused"
        CLOSED = "closed", "closed"

    name = models.CharField(max_length=200)
    token = models.CharField(max_length=32, unique=True, default=new_token, help_text="the invite link's secret")
    split = models.CharField(max_length=16)
    types = models.JSONField(default=list, blank=True, help_text="type names; empty for all")
    dataset = models.CharField(max_length=128, blank=True, help_text="the dataset of its pool; empty: every one")
    people_solvable = models.CharField(
        max_length=16,
        blank=True,
        help_text="its pool only of puzzles people solved, as PEOPLE:ATTEMPTS (annotation/live/solvable.py); "
        "empty: any",
    )
    quotas = models.JSONField(
        default=dict,
        blank=True,
        help_text="puzzles per type in the pool, drawn by seeded sampling; empty: every replay-verified puzzle",
    )
    puzzles_per_annotator = models.PositiveIntegerField()
    overlap = models.PositiveIntegerField(default=1, help_text="distinct annotators per puzzle")
    order = models.CharField(max_length=16, choices=Order.choices, default=Order.SHUFFLED)
    seed = models.IntegerField(default=0)
    show_verdict = models.BooleanField(default=False)
    time_limit_s = models.PositiveIntegerField(null=True, blank=True, help_text="per puzzle; empty for none")
    attempts_per_puzzle = models.PositiveIntegerField(default=1, help_text="k, for Pass@k; 1 for Pass@1")
    hold_minutes = models.PositiveIntegerField(default=30, help_text="an unfinished assignment expires after this")
    practice = models.ManyToManyField(Puzzle, blank=True, related_name="practice_in", help_text="not scored")
    gold = models.ManyToManyField(Puzzle, blank=True, related_name="gold_in", help_text="for quality control")
    gold_screen_out_at = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="wrong gold answers that screen a person out at once, with the failed-gold code; "
        "empty: only staff decide",
    )
    completion_code = models.CharField(max_length=32, default=new_completion_code)
    # Prolific's codes for the other ways out (studies/outcomes.py says when each is shown).
    no_places_code = models.CharField(
        max_length=32, default=new_completion_code, help_text="for people who find no place left"
    )
    screened_out_code = models.CharField(
        max_length=32, default=new_completion_code, help_text="for people whose screen is too small (device check)"
    )
    failed_gold_code = models.CharField(
        max_length=32, default=new_completion_code, help_text="for people excluded for failing gold puzzles"
    )
    return_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="where a finished annotator is sent, e.g. Prolific's completion URL; "
        "empty: Prolific's with the code when the link carries PROLIFIC_PID",
    )
    require_crowd_id = models.BooleanField(
        default=False, help_text="joining needs a crowd id (PROLIFIC_PID or workerId) in the invite link"
    )
    # The consent page (the invite link's first page).
    researcher = models.CharField(max_length=200, blank=True, help_text="who runs the study: a person, a lab")
    contact = models.CharField(max_length=200, blank=True, help_text="an e-mail address or page for questions")
    duration_minutes = models.PositiveIntegerField(null=True, blank=True, help_text="about how long it takes")
    consent_text = models.TextField(blank=True, help_text="what people agree to; empty: the standard text")
    decline_url = models.URLField(
        max_length=500, blank=True, help_text="where someone who declines is sent, e.g. the platform's return link"
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    is_open = models.BooleanField(
        default=True, help_text="launched and not closed (open or paused); kept in step with status"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("annotation:study", args=[self.pk])

    def puzzles_total(self) -> int:
        """The puzzles each annotator works through: their share of the pool, plus every gold one."""
        return self.puzzles_per_annotator + self.gold.count()

    @property
    def attempts_allowed(self) -> int:
        """k as it applies: a retry is offered only after a wrong answer, so offering one tells the
        verdict; with verdicts hidden (a study stored so before set-up refused it) k is 1."""
        return self.attempts_per_puzzle if self.show_verdict else 1

    @property
    def accepts_work(self) -> bool:
        """People may join and get new puzzles (open); a draft, a paused or a closed study refuses."""
        return self.status == self.Status.OPEN


class Enrollment(models.Model):
    """One annotator in one study."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="enrollments")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="enrollments")
    external_ids = models.JSONField(default=dict, blank=True, help_text="crowd-platform ids, e.g. PROLIFIC_PID")
    crowd_id = models.CharField(
        max_length=100, blank=True, help_text="the id that names the person (PROLIFIC_PID or workerId); one per study"
    )
    joined_at = models.DateTimeField(auto_now_add=True)
    user_agent = models.CharField(max_length=300, blank=True, help_text="the browser it joined or last resumed with")
    join_address = models.CharField(
        max_length=45, blank=True, help_text="the client address it joined from (consensus counts people by it)"
    )
    consented_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    excluded = models.BooleanField(default=False)
    excluded_reason = models.CharField(max_length=300, blank=True)
    waiting_since = models.DateTimeField(
        null=True, blank=True, help_text="found no free place since then; after the hold time, the no-places code"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "participant"], name="one_enrollment_per_study"),
            models.UniqueConstraint(
                fields=["study", "crowd_id"], condition=~models.Q(crowd_id=""), name="one_enrollment_per_crowd_id"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.participant} in {self.study}"

    def puzzles_done(self) -> int:
        """Places finished (solved, or out of tries) plus gold puzzles answered."""
        scored = self.slots.filter(done=True).count()
        gold = Attempt.objects.filter(
            participant_id=self.participant_id,
            study_id=self.study_id,
            purpose=Attempt.Purpose.GOLD,
            submitted_at__isnull=False,
        ).count()
        return scored + gold


class Slot(models.Model):
    """One of a study puzzle's `overlap` places; taken by one annotator at a time."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="slots")
    puzzle = models.ForeignKey(Puzzle, on_delete=models.PROTECT, related_name="slots")
    copy = models.PositiveSmallIntegerField()
    rank = models.PositiveIntegerField(help_text="place in the study's order")
    enrollment = models.ForeignKey(Enrollment, null=True, blank=True, on_delete=models.SET_NULL, related_name="slots")
    assigned_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    done = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "puzzle", "copy"], name="slot_unique_copy")]
        indexes = [models.Index(fields=["study", "done", "rank"])]

    def __str__(self) -> str:
        return f"{self.study_id}:{self.puzzle_id}#{self.copy}"


class Attempt(models.Model):
    """One puzzle shown to one participant. The verdict fields are filled by the server on submit."""

    class Purpose(models.TextChoices):
        SCORED = "scored", "scored"
        PRACTICE = "practice", "practice"
        GOLD = "gold", "gold"

    uid = models.CharField(max_length=32, unique=True, default=new_attempt_uid, editable=False)
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="attempts")
    puzzle = models.ForeignKey(Puzzle, on_delete=models.PROTECT, related_name="attempts")
    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.CASCADE, related_name="attempts")
    slot = models.ForeignKey(Slot, null=True, blank=True, on_delete=models.SET_NULL, related_name="attempts")
    purpose = models.CharField(max_length=16, choices=Purpose.choices, default=Purpose.SCORED)
    position = models.PositiveIntegerField(
        null=True, blank=True, help_text="its place in the person's study run, from 1 (gold counts, practice does not)"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    abandoned_at = models.DateTimeField(null=True, blank=True, help_text="its assignment expired and moved on")
    acked_seq = models.PositiveIntegerField(default=0, help_text="highest contiguous batch stored")
    max_seq = models.PositiveIntegerField(default=0, help_text="highest batch stored, gaps or not")
    # acked_seq and max_seq are those of the page that stored last: each load of the attempt's page
    # numbers its batches in a range of its own (live/frames.py SEQ_BLOCK, live/intake.py _on_page).
    pages_served = models.PositiveIntegerField(
        default=0, help_text="loads of its page so far; each numbers its batches in a range of its own"
    )
    unstored_batches = models.JSONField(
        default=list,
        blank=True,
        help_text="batches that reached the server and were not stored: [{seq, events, why}] (closed, seq_conflict)",
    )
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
    # Integrity (issue 9): when the puzzle was first shown, whether a hand was behind the
    # actions, and how much the attempt has stored against its limits (live/intake.py).
    served_at = models.DateTimeField(
        null=True, blank=True, help_text="its puzzle first served (page or page data); the time limit runs from here"
    )
    # The time limit counts time on screen (live/timing.py, "On screen"): what the server saw of
    # the person leaving the puzzle for the Pause page, and what that left of the limit.
    pauses = models.JSONField(
        default=list,
        blank=True,
        help_text="[start, end] epoch ms: the Pause page served, the puzzle served again (end null: paused)",
    )
    screen_ms = models.FloatField(
        null=True, help_text="serving to submit by the server's clock, less the pauses and hidden spells it saw"
    )
    input_ok = models.BooleanField(
        null=True, help_text="its semantic actions are backed by raw pointer or key input (live/evidence.py)"
    )
    input_problem = models.CharField(max_length=200, blank=True, help_text="why not, when input_ok is false")
    event_count = models.PositiveIntegerField(default=0, help_text="events stored, against the attempt's limit")
    event_bytes = models.PositiveIntegerField(default=0, help_text="bytes of batches stored, against the limit")
    missing_batches = models.JSONField(
        default=list, blank=True, help_text="batch numbers that never arrived before it was scored (incomplete)"
    )
    scored_through = models.PositiveIntegerField(
        null=True, blank=True, help_text="the batch its score read through; a rescore reads the same (live/scoring.py)"
    )
    motion = models.JSONField(
        null=True,
        blank=True,
        help_text="pointer motion features through the submit, measured when scored (live/motion.py)",
    )

    class Meta:
        indexes = [models.Index(fields=["puzzle", "submitted_at"])]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"attempt {self.uid} on {self.puzzle_id}"

    @property
    def is_submitted(self) -> bool:
        return self.submitted_at is not None

    @property
    def is_closed(self) -> bool:
        return self.submitted_at is not None or self.abandoned_at is not None


class Event(models.Model):
    """One logged event (docs/events.md). Stored once per (attempt, seq, index)."""

    REFUSED = "refused"  # the kind of the stand-in stored for a batch the server refused

    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField(help_text="the batch number it arrived in")
    index = models.PositiveSmallIntegerField(help_text="its place in the batch")
    kind = models.CharField(max_length=24)
    t = models.FloatField(help_text="the page's timestamp, epoch ms (performance.timeOrigin based)")
    received = models.FloatField(help_text="server receive time of its batch, epoch ms")
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["attempt", "seq", "index"], name="event_unique_in_batch")]
        # The few events quality control and the submit look up among an attempt's hundreds: its
        # page loads (the window it showed in) and visibility changes (times hidden). Partial, so
        # the pointer samples that make up most events cost nothing more to store.
        indexes = [
            models.Index(fields=["attempt", "seq"], condition=Q(kind="load"), name="event_load_by_attempt"),
            models.Index(
                fields=["attempt", "seq"], condition=Q(kind="visibilitychange"), name="event_visibility_by_attempt"
            ),
        ]
        ordering = ["attempt", "seq", "index"]

    def __str__(self) -> str:
        return f"{self.attempt_id}#{self.seq}.{self.index} {self.kind}"


class AgentRun(models.Model):
    """One run of an agent: a model behind a protocol, on a fixed list of puzzles, k rollouts each.

    `agent run` makes harness runs (settings holds everything needed to resume one); `agent import`
    makes imported runs from output folders. Reports take exactly k rollouts per puzzle from one run.
    """

    class Source(models.TextChoices):
        HARNESS = "harness", "our harness"
        IMPORT = "import", "imported output folder"
        ENVIRONMENT = "environment", "training environment episodes"

    name = models.CharField(max_length=200, unique=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.HARNESS)
    model = models.CharField(max_length=200, blank=True)
    base_url = models.CharField(max_length=500, blank=True, help_text="the chat completions server")
    protocol = models.CharField(max_length=32, blank=True, help_text="captchaarena-native or openai-tools")
    dataset = models.CharField(max_length=128, blank=True)
    split = models.CharField(max_length=16, blank=True)
    puzzles = models.JSONField(default=list, blank=True, help_text="puzzle ids, in run order")
    rollouts_per_puzzle = models.PositiveIntegerField(default=1, help_text="k, for Pass@k")
    settings = models.JSONField(default=dict, blank=True, help_text="steps, tokens, retries, context, prompt source")
    participant = models.ForeignKey(
        Participant, null=True, blank=True, on_delete=models.SET_NULL, related_name="agent_runs"
    )
    source_path = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    def counts(self) -> dict[str, int]:
        """Rollouts by status, and how many of those run were submitted and correct."""
        rows = self.rollouts.values_list("status", "submitted", "correct")
        counts = dict.fromkeys(Rollout.Status.values, 0) | {"submitted": 0, "correct": 0}
        for status, submitted, correct in rows:
            counts[status] += 1
            counts["submitted"] += bool(submitted)
            counts["correct"] += bool(correct)
        return counts


class PlayerProcess(models.Model):
    """A process that plays rollouts (`env serve`, `agent run`): it says it is alive every few
    seconds, so a rollout left open by one that died is told from one still being played
    (annotation/agents/players.py)."""

    kind = models.CharField(max_length=32, help_text="env serve or agent run")
    host = models.CharField(max_length=200, help_text="the machine's (or container's) host name")
    pid = models.PositiveIntegerField()
    pid_namespace = models.CharField(max_length=64, blank=True, help_text="pids are only comparable within one")
    started_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(help_text="last heard from")

    def __str__(self) -> str:
        return f"{self.kind} (pid {self.pid} on {self.host})"


class Rollout(models.Model):
    """One episode of a run on one puzzle: its attempt on the live page and how it ended.

    failed (the model server or the page failed after retries) is left out of Pass@k; no_action
    (the model never produced a usable action) counts as not submitted, as published.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "not run yet"
        DONE = "done", "done"
        NO_ACTION = "no_action", "no usable action"
        FAILED = "failed", "failed (left out)"

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="rollouts")
    puzzle = models.ForeignKey(Puzzle, on_delete=models.CASCADE, related_name="rollouts")
    index = models.PositiveSmallIntegerField(help_text="0-based rollout number on this puzzle")
    attempt = models.OneToOneField(Attempt, null=True, blank=True, on_delete=models.SET_NULL, related_name="rollout")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    submitted = models.BooleanField(null=True)
    correct = models.BooleanField(null=True)
    end = models.CharField(
        max_length=24, blank=True, help_text="as published: done, max_steps_reached or submit_not_clicked"
    )
    reason = models.CharField(max_length=300, blank=True, help_text="why it failed, or how it ended")
    steps = models.PositiveIntegerField(default=0, help_text="calls executed (the published total_steps)")
    instruction = models.TextField(blank=True, help_text="as read from the page")
    system_prompt = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    player = models.ForeignKey(
        PlayerProcess,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rollouts",
        help_text="the process playing it while pending (none for a job's chunk: the job's lease covers it)",
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "puzzle", "index"], name="rollout_unique_index")]
        ordering = ["run", "puzzle", "index"]

    def __str__(self) -> str:
        return f"rollout {self.index} of run {self.run_id} on {self.puzzle_id}"


class Turn(models.Model):
    """One model call of a rollout: what was sent, what came back, what was done with it.

    request: the messages sent, images by reference ("screenshot:<n>", a PNG in PRIVATE_ROOT),
    earlier replies by reference ({"ref": "turn:<n>"}) and the system prompt as {"ref": "system_prompt"}.
    calls: [{name, arguments (as parsed), applied (as executed), result, screenshot (step n or null)}].
    """

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveSmallIntegerField(help_text="0-based model call")
    seen = models.PositiveSmallIntegerField(default=0, help_text="the last screenshot the model saw")
    request = models.JSONField(default=list, blank=True)
    reply = models.JSONField(null=True, blank=True, help_text="the server's message, with finish_reason")
    calls = models.JSONField(default=list, blank=True)
    tokens_in = models.PositiveIntegerField(null=True)
    tokens_out = models.PositiveIntegerField(null=True)
    latency_ms = models.FloatField(null=True, help_text="the model call, retries included")
    retries = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rollout", "number"], name="turn_unique_number")]
        ordering = ["rollout", "number"]

    def __str__(self) -> str:
        return f"turn {self.number} of rollout {self.rollout_id}"


class Flag(models.Model):
    """An annotator's report that a puzzle is broken, ambiguous, unsolvable or offensive."""

    class Reason(models.TextChoices):
        # The labels are what the page's flag dialog shows.
        BROKEN = "broken", "Broken: it does not load or respond"
        AMBIGUOUS = "ambiguous", "Ambiguous: more than one answer fits"
        UNSOLVABLE = "unsolvable", "Unsolvable: no answer fits"
        OFFENSIVE = "offensive", "Offensive"
        OTHER = "other", "Something else"

    class Status(models.TextChoices):
        OPEN = "open", "open"
        DISMISSED = "dismissed", "dismissed"
        RETIRED = "retired", "puzzle retired"
        CORRECTED = "corrected", "truth corrected"

    puzzle = models.ForeignKey(Puzzle, on_delete=models.CASCADE, related_name="flags")
    attempt = models.ForeignKey(Attempt, null=True, blank=True, on_delete=models.SET_NULL, related_name="flags")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="flags")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    NOTE_MAX = 1000  # characters: the form's limit too (the page reads it from its data)
    note = models.TextField(blank=True, max_length=NOTE_MAX)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # A person's repeated flags on one puzzle are one flag (flag_raise returns the open one).
            models.UniqueConstraint(
                fields=["puzzle", "participant"], condition=models.Q(status="open"), name="one_open_flag_per_person"
            )
        ]

    def __str__(self) -> str:
        return f"{self.reason} flag on {self.puzzle_id}"


class AuditLog(models.Model):
    """What an admin did to a puzzle, an annotator or a study, and what it changed: kept for the record."""

    class Action(models.TextChoices):
        FLAG_DISMISSED = "flag_dismissed", "flag dismissed"
        PUZZLE_RETIRED = "puzzle_retired", "puzzle retired"
        TRUTH_CORRECTED = "truth_corrected", "truth corrected"
        ANNOTATOR_EXCLUDED = "annotator_excluded", "annotator excluded"
        ANNOTATOR_INCLUDED = "annotator_included", "annotator included again"
        STUDY_STATUS = "study_status", "study opened, paused or closed"

    action = models.CharField(max_length=32, choices=Action.choices)
    puzzle = models.ForeignKey(Puzzle, null=True, blank=True, on_delete=models.CASCADE, related_name="audit")
    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.CASCADE, related_name="audit")
    enrollment = models.ForeignKey(Enrollment, null=True, blank=True, on_delete=models.CASCADE, related_name="audit")
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.action} at {self.at:%Y-%m-%d %H:%M}"


def default_env_splits() -> list[str]:
    """A trainer's token draws from the train split unless staff give it more."""
    return ["train"]


class EnvToken(models.Model):
    """A trainer's key to the training environment (annotation/environment): only its hash is
    kept; it serves the datasets listed and nothing once revoked."""

    name = models.CharField(max_length=100, unique=True, help_text="the client; names its runs")
    key_hash = models.CharField(max_length=64, unique=True, editable=False, help_text="sha256 of the key")
    datasets = models.JSONField(default=list, help_text="dataset labels it may draw puzzles from")
    splits = models.JSONField(default=default_env_splits, help_text="splits it may draw puzzles from")
    max_sessions = models.PositiveIntegerField(default=4, help_text="its sessions open at once, per env serve")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True, help_text="set: the key opens nothing any more")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class EnvGroup(models.Model):
    """The puzzle of a group of environment episodes: every reset naming the group in the same run
    (client and checkpoint) gets it, with the filters it was drawn with, until it lies unused."""

    token = models.ForeignKey(EnvToken, on_delete=models.CASCADE, related_name="groups")
    run = models.ForeignKey("AgentRun", null=True, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    puzzle = models.ForeignKey(Puzzle, on_delete=models.CASCADE, related_name="+")
    filters = models.JSONField(default=dict, help_text="the reset filters its puzzle was drawn with")
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(default=timezone.now, help_text="its last reset")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["token", "run", "name"], name="envgroup_unique_run_name")]

    def __str__(self) -> str:
        return self.name


def validate_benchmark_name(value: str) -> None:
    from django.core.exceptions import ValidationError

    from puzzles.hosted_names import BENCHMARK_NAME

    if not BENCHMARK_NAME.fullmatch(value):
        raise ValidationError(f"benchmark name {value!r}: use 1-24 lowercase letters, digits or hyphens")


class Benchmark(models.Model):
    """Another project's CAPTCHA server, registered to be measured through ours (docs/hosted.md).
    Its drawn puzzles are the Puzzle rows of dataset `hosted:<name>`."""

    name = models.CharField(max_length=24, unique=True, validators=[validate_benchmark_name])
    base_url = models.URLField(max_length=300)
    # A plain string checked against annotation/hosted/dialects.py (no choices=): a new dialect needs no migration.
    dialect = models.CharField(max_length=32)
    truth_public = models.BooleanField(default=False, help_text="its puzzles' answers are published")
    # The report says where its puzzles came from: made here by the peer's own generator (the default,
    # as Next-Gen's served here are), or the set its paper published.
    published_set = models.BooleanField(default=False, help_text="its stored puzzles are the paper's published set")
    # {url: {"sha256", "source"}}: off-origin files its page loads, served by the proxy from local
    # copies (annotation/hosted/assets.py); set from the dialect's pins when added.
    assets = models.JSONField(default=dict, blank=True)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class BenchmarkFamily(models.Model):
    """What probing one family of a benchmark found: served, or set aside with the reason."""

    class Status(models.TextChoices):
        SERVED = "served", "served"  # the peer accepted its own truth through its API
        SET_ASIDE = "set_aside", "set aside"  # never served as scored work; the reason says why

    class PageCheck(models.TextChoices):
        PENDING = "pending", "pending"  # no truth replay through the proxied page yet
        PASSED = "passed", "passed"
        FAILED = "failed", "failed"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="families")
    family = models.CharField(max_length=39)
    status = models.CharField(max_length=16, choices=Status.choices)
    reason = models.CharField(max_length=500, blank=True)
    stateful = models.BooleanField(default=False, help_text="the peer keeps each fetch's state, single use")
    multi_step = models.BooleanField(default=False, help_text="answered in server-timed steps")
    address = models.CharField(max_length=8, help_text="how a puzzle is addressed: seed, index, id or none")
    size = models.PositiveIntegerField(null=True, blank=True, help_text="stored puzzles, when the peer says")
    page_check = models.CharField(max_length=16, choices=PageCheck.choices, default=PageCheck.PENDING)
    page_note = models.CharField(max_length=300, blank=True, help_text="what is known of its page")
    probed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "family"], name="benchmarkfamily_unique")]
        ordering = ["benchmark", "family"]

    def __str__(self) -> str:
        return f"{self.benchmark.name}:{self.family} ({self.status})"


class HostedCheck(models.Model):
    """The one check_answer (or multi-step sequence) the proxy forwarded for a hosted attempt, and
    the peer's own replies, verbatim (server-side only). The attempt's verdict is copied from here."""

    attempt = models.OneToOneField(Attempt, on_delete=models.CASCADE, related_name="hosted_check")
    steps = models.JSONField(default=list, help_text="[{answer, status, reply, at}]: each post forwarded and its reply")
    correct = models.BooleanField(null=True)
    finished_at = models.DateTimeField(null=True, blank=True, help_text="the peer's final verdict arrived")

    def __str__(self) -> str:
        return f"hosted check of attempt {self.attempt_id} ({len(self.steps)} steps)"
