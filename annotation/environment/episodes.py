"""The database side of an environment episode: which puzzle, which run, which rollout, what reward.

Every episode is a rollout of an AgentRun (source "environment") named by the token's client and
the checkpoint label, with its own attempt of the run's agent participant, so labels, motion,
reports and exports see it as any agent rollout. The reward is the attempt's, as the server's
verifier scored it; an episode that never submitted gets 0.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from annotation.datasets.labels import valid_puzzles
from annotation.environment.protocol import BadRequest, ResetParams
from annotation.live.attempts import attempt_start, system_participant
from annotation.live.solvable import SolvableRule, solvable_ids
from annotation.models import AgentRun, Attempt, EnvGroup, EnvToken, Participant, Rollout
from puzzles.models import Puzzle
from puzzles.registry import UnknownPuzzleType, get_type

DRAWABLE = (Puzzle.Status.DRAFT, Puzzle.Status.VERIFIED)  # not failed, not retired
PROTOCOL = "openenv"


@dataclass(frozen=True)
class Begun:
    """What the browser side needs to play an episode, and what `state` reports of it."""

    rollout_id: int
    attempt_uid: str
    user: User  # the run's agent participant's user: the page is signed in as it
    puzzle_uid: str
    type: str
    dataset: str
    split: str
    run: str


def episode_begin(*, token: EnvToken, params: ResetParams, player_id: int | None = None) -> Begun:
    """The episode's puzzle drawn, its rollout and attempt made (pending until it ends), held by
    the server process `player_id` (a PlayerProcess: failed with the reason if that one dies)."""
    puzzle = _group_puzzle(token, params) if params.group else _draw(token, params)
    run = _run(token, params.checkpoint, puzzle)
    participant = run.participant
    assert participant is not None  # every environment run is made with its participant
    with transaction.atomic():
        # One episode at a time numbers its rollout and extends the run: from the row as locked,
        # since another session's episode may have changed it since `run` was read.
        locked = AgentRun.objects.select_for_update().get(pk=run.pk)
        index = Rollout.objects.filter(run=locked, puzzle=puzzle).count()
        attempt = attempt_start(participant=participant, puzzle=puzzle)
        rollout = Rollout.objects.create(
            run=locked, puzzle=puzzle, index=index, attempt=attempt, started_at=timezone.now(), player_id=player_id
        )
        if puzzle.pk not in locked.puzzles or index >= locked.rollouts_per_puzzle:
            # k is the most rollouts a puzzle has: exports give each its own rollout_<n> folder.
            locked.puzzles = locked.puzzles if puzzle.pk in locked.puzzles else [*locked.puzzles, puzzle.pk]
            locked.rollouts_per_puzzle = max(locked.rollouts_per_puzzle, index + 1)
            locked.save(update_fields=["puzzles", "rollouts_per_puzzle"])
    return Begun(
        rollout.pk, attempt.uid, participant.user, puzzle.uid, puzzle.type, puzzle.dataset, puzzle.split, run.name
    )


def _draw(token: EnvToken, params: ResetParams) -> Puzzle:
    """The puzzle asked for by uid, or one drawn (by `seed`, else at random) from the token's pool."""
    allowed = Puzzle.objects.filter(dataset__in=token.datasets)
    if params.puzzle:
        found = allowed.filter(uid=params.puzzle).first()
        if found is None:
            raise BadRequest(f"no puzzle {params.puzzle!r} in this token's datasets")
        return found
    if params.dataset and params.dataset not in token.datasets:
        raise BadRequest(f"this token serves {', '.join(token.datasets)}, not {params.dataset!r}")
    pool = allowed.filter(status__in=DRAWABLE)
    if params.dataset:
        pool = pool.filter(dataset=params.dataset)
    if params.split:
        pool = pool.filter(split=params.split)
    if params.type:
        try:
            pool = pool.filter(type=get_type(params.type).name)
        except UnknownPuzzleType as error:
            raise BadRequest(str(error)) from None
    if params.verified_only:
        pool = pool.filter(status=Puzzle.Status.VERIFIED)
    ids = _curriculum(token, list(pool.order_by("pk").values_list("pk", flat=True)), params)
    if not ids:
        raise BadRequest("no puzzle matches this reset's pool and curriculum")
    chooser = random.Random(params.seed) if params.seed is not None else random.SystemRandom()
    return Puzzle.objects.get(pk=chooser.choice(ids))


def _curriculum(token: EnvToken, ids: list[int], params: ResetParams) -> list[int]:
    """The pool's puzzles that pass the reset's curriculum filters, in the pool's order."""
    if params.human_pass_min is not None or params.human_pass_max is not None:
        rates = human_pass_rates(ids)
        low, high = params.human_pass_min or 0.0, 1.0 if params.human_pass_max is None else params.human_pass_max
        ids = [pk for pk in ids if pk in rates and low <= rates[pk] <= high]
    if params.mined_from:
        kept = mined(token, params.mined_from, params.mined_last)
        ids = [pk for pk in ids if pk in kept]
    if params.valid_only:
        valid = valid_puzzles(ids)
        ids = [pk for pk in ids if pk in valid]
    if params.people_solvable:
        solvable = solvable_ids(ids, SolvableRule.parse(params.people_solvable))
        ids = [pk for pk in ids if pk in solvable]
    return ids


def human_pass_rates(ids: list[int]) -> dict[int, float]:
    """People's pass rate per puzzle: their scored attempts with a verdict, correct or not."""
    rows = (
        Attempt.objects.filter(
            puzzle_id__in=ids,
            participant__kind=Participant.Kind.HUMAN,
            purpose=Attempt.Purpose.SCORED,
            submitted_at__isnull=False,
        )
        .values("puzzle_id")
        .annotate(total=Count("pk"), correct=Count("pk", filter=Q(correct=True)))
    )
    return {row["puzzle_id"]: row["correct"] / row["total"] for row in rows}


def mined(token: EnvToken, run_name: str, last: int) -> set[int]:
    """Qwen-CUA's mining rule over one of the token's own runs: the puzzles solved at least once,
    but not every time, in their last `last` rollouts that ended (failed ones are no evidence).

    Only the token's runs: another client's, or an evaluation's, would tell this one which puzzles
    they solve; and one answer for "none" and "not yours", so names cannot be probed either."""
    run = _runs_of(token).filter(name=run_name).first()
    if run is None:
        raise BadRequest(f"this token has no run named {run_name!r} to mine")
    ended = run.rollouts.filter(status__in=(Rollout.Status.DONE, Rollout.Status.NO_ACTION))
    outcomes: dict[int, list[bool]] = {}
    for puzzle_id, correct in ended.order_by("-finished_at", "-pk").values_list("puzzle_id", "correct"):
        if len(outcomes.setdefault(puzzle_id, [])) < last:
            outcomes[puzzle_id].append(bool(correct))
    return {puzzle_id for puzzle_id, seen in outcomes.items() if any(seen) and not all(seen)}


def _group_puzzle(token: EnvToken, params: ResetParams) -> Puzzle:
    """The group's puzzle: drawn by its first reset, then the same for every reset naming it."""
    existing = EnvGroup.objects.filter(token=token, name=params.group).select_related("puzzle").first()
    if existing is None:
        existing, _ = EnvGroup.objects.get_or_create(
            token=token, name=params.group, defaults={"puzzle": _draw(token, params)}
        )
    if existing.puzzle.dataset not in token.datasets:  # the token's datasets changed since it was drawn
        raise BadRequest(f"group {params.group!r} plays a puzzle of {existing.puzzle.dataset}, not served any more")
    return existing.puzzle


def _runs_of(token: EnvToken) -> QuerySet[AgentRun]:
    """The runs of this token's environment episodes (its client's, as the run's settings name it)."""
    return AgentRun.objects.filter(source=AgentRun.Source.ENVIRONMENT, settings__client=token.name)


def _run(token: EnvToken, checkpoint: str, puzzle: Puzzle) -> AgentRun:
    """The run of this client and checkpoint, made on its first episode."""
    found = _runs_of(token).filter(settings__checkpoint=checkpoint).select_related("participant__user").first()
    if found is not None:
        return found
    name = f"env {token.name}: {checkpoint}"
    with transaction.atomic():
        run, created = AgentRun.objects.get_or_create(
            name=name,
            defaults={
                "source": AgentRun.Source.ENVIRONMENT,
                "model": checkpoint,
                "protocol": PROTOCOL,
                "dataset": puzzle.dataset,
                "split": puzzle.split,
                "settings": {"client": token.name, "checkpoint": checkpoint},
                "started_at": timezone.now(),
            },
        )
        if created:
            run.participant = system_participant(kind=Participant.Kind.AGENT, label=f"run {run.pk}: {name}")
            run.save(update_fields=["participant"])
    if run.source != AgentRun.Source.ENVIRONMENT or run.settings.get("client") != token.name:
        raise BadRequest(f"another run is named {name!r}: give this checkpoint another label")
    return AgentRun.objects.select_related("participant__user").get(pk=run.pk)


def episode_reward(rollout_id: int) -> float:
    """The server verifier's reward for the episode's attempt; 0 when it was never submitted."""
    attempt = Attempt.objects.filter(rollout__pk=rollout_id).only("submitted_at", "reward").first()
    if attempt is None or attempt.submitted_at is None or attempt.reward is None:
        return 0.0
    return float(attempt.reward)
