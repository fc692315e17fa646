"""The database side of an environment episode: which puzzle, which run, which rollout, what reward.

Every episode is a rollout of an AgentRun (source "environment") named by the token's client and
the checkpoint label, with its own attempt of the run's agent participant, so labels, motion,
reports and exports see it as any agent rollout. The reward is the attempt's, as the server's
verifier scored it; an episode that never submitted gets 0.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

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
# A group unused this long is over: its name draws a new puzzle (a GRPO group's rollouts follow
# each other within minutes; a later job reusing the names gets puzzles of its own).
GROUP_IDLE_S = 30 * 60
# What a reset says that is not a filter of the pool: the rest (split, type, the curriculum...) are.
NOT_FILTERS = {"puzzle", "group", "checkpoint", "episode_id", "seed", "max_steps"}


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
    found = _run_found(token, params.checkpoint)
    group = _group_live(found, params) if found is not None and params.group else None
    puzzle = group.puzzle if group is not None else _draw(token, params, avoid=_held(token) if params.group else [])
    run = found or _run(token, params.checkpoint, puzzle)
    if params.group:
        puzzle = _group_kept(token, run, params, puzzle)
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


def _draw(token: EnvToken, params: ResetParams, avoid: list[int]) -> Puzzle:
    """The puzzle asked for by uid, or one drawn (by `seed`, else at random) from the token's pool,
    the `avoid` puzzles left out while others remain."""
    allowed = Puzzle.objects.filter(dataset__in=token.datasets, split__in=token.splits)
    if params.puzzle:
        found = allowed.filter(uid=params.puzzle).first()
        if found is None:
            raise BadRequest(f"no puzzle {params.puzzle!r} in this token's datasets and splits")
        return found
    if params.dataset and params.dataset not in token.datasets:
        raise BadRequest(f"this token serves {', '.join(token.datasets)}, not {params.dataset!r}")
    if params.split and params.split not in token.splits:
        raise BadRequest(f"this token serves split {', '.join(token.splits)}, not {params.split!r}")
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
    ids = [pk for pk in ids if pk not in set(avoid)] or ids
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


def reset_filters(params: ResetParams) -> dict[str, Any]:
    """The filters a reset puts on the pool, those it gave (not left at their defaults)."""
    defaults = ResetParams()
    return {
        field.name: getattr(params, field.name)
        for field in fields(ResetParams)
        if field.name not in NOT_FILTERS and getattr(params, field.name) != getattr(defaults, field.name)
    }


def _group_live(run: AgentRun, params: ResetParams) -> EnvGroup | None:
    """The run's group of this name, if it is still in use; a reset with other filters is refused."""
    since = timezone.now() - timedelta(seconds=GROUP_IDLE_S)
    group = EnvGroup.objects.filter(run=run, name=params.group, used_at__gte=since).select_related("puzzle").first()
    filters = reset_filters(params)
    if group is not None and filters and filters != group.filters:
        raise BadRequest(
            f"group {params.group!r} was drawn with {_said(group.filters)}; this reset asks {_said(filters)}: "
            "send the group's filters (or none), or name another group"
        )
    return group


def _said(filters: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in sorted(filters.items())) or "no filters"


def _held(token: EnvToken) -> list[int]:
    """The puzzles of this token's groups in use: a new group draws another while the pool allows."""
    since = timezone.now() - timedelta(seconds=GROUP_IDLE_S)
    return list(EnvGroup.objects.filter(token=token, used_at__gte=since).values_list("puzzle_id", flat=True))


def _group_kept(token: EnvToken, run: AgentRun, params: ResetParams, drawn: Puzzle) -> Puzzle:
    """The group's puzzle, the group kept in use: `drawn` for a new group (or one unused for
    GROUP_IDLE_S, drawn again), else the one its first reset drew, still served to this token."""
    now = timezone.now()
    with transaction.atomic():
        group, made = EnvGroup.objects.select_for_update().get_or_create(
            token=token, run=run, name=params.group, defaults={"puzzle": drawn, "filters": reset_filters(params)}
        )
        if not made and group.used_at < now - timedelta(seconds=GROUP_IDLE_S):
            group.puzzle, group.filters = drawn, reset_filters(params)
        group.used_at = now
        group.save()
    puzzle = Puzzle.objects.get(pk=group.puzzle_id)
    if puzzle.dataset not in token.datasets or puzzle.split not in token.splits:  # the token changed since
        said = f"{puzzle.dataset}, split {puzzle.split}"
        raise BadRequest(f"group {params.group!r} plays a puzzle of {said}, not served any more")
    return puzzle


def _runs_of(token: EnvToken) -> QuerySet[AgentRun]:
    """The runs of this token's environment episodes (its client's, as the run's settings name it)."""
    return AgentRun.objects.filter(source=AgentRun.Source.ENVIRONMENT, settings__client=token.name)


def _run_found(token: EnvToken, checkpoint: str) -> AgentRun | None:
    return _runs_of(token).filter(settings__checkpoint=checkpoint).select_related("participant__user").first()


def _run(token: EnvToken, checkpoint: str, puzzle: Puzzle) -> AgentRun:
    """The run of this client and checkpoint, made on its first episode."""
    found = _run_found(token, checkpoint)
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


def episode_outcome(rollout_id: int) -> tuple[float, str]:
    """The server verifier's reward for the episode's attempt and its verdict (correct, incorrect);
    0 and unanswered when it was never submitted."""
    attempt = Attempt.objects.filter(rollout__pk=rollout_id).only("submitted_at", "reward", "correct").first()
    if attempt is None or attempt.submitted_at is None or attempt.reward is None:
        return 0.0, "unanswered"
    return float(attempt.reward), "correct" if attempt.correct else "incorrect"
