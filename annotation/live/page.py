"""What the live page is given: public fields and asset URLs, never the truth.

No `from __future__ import annotations`: the TypedDicts keep real annotations, so their
__required_keys__ are right at runtime (Python 3.11).
"""

from typing import NotRequired, TypedDict

from django.urls import reverse
from django.utils import timezone

from annotation.attempt_hosts import attempt_origin
from annotation.live.attempts import attempt_new_page, attempt_on_screen_ms, is_hosted
from annotation.live.frames import BEAT_MS, MAX_EVENTS, MAX_KEY_TEXT, MAX_POSTED_BATCHES, MAX_TEXT, SEQ_BLOCK
from annotation.live.intake import shows_verdict
from annotation.models import Attempt, Enrollment, Flag, HostedCheck, Participant
from annotation.url_templates import url_template
from puzzles.layout import STAGE_H, STAGE_W, LayoutData, StageSize
from puzzles.registry import get_type
from puzzles.types.contract import PublicData, Widget


class StudyBar(TypedDict):
    """Where an annotator stands in a study, and where to go next."""

    name: str
    practice: bool  # shown as practice; whether a puzzle is gold is never sent
    practice_left: int  # practice puzzles still to do after this one (0: the scored ones come next)
    done: int
    total: int
    time_limit_s: int | None  # per puzzle; None for none
    elapsed_ms: int  # on screen since first served, across reloads and devices (pauses left out)
    next_url: str
    pause_url: str


class Stats(TypedDict):
    """The published stats bar: answers submitted before this one, and how many were right
    (None where the participant is not shown verdicts)."""

    total: int
    correct: int | None


class PieceData(TypedDict):
    """The drag widget's piece, natural image pixels."""

    size: list[int]  # [w, h]
    start: list[float]  # [x, y] of its top-left


class PageImages(TypedDict):
    """Asset URLs by their role in the public data."""

    image: str
    reference: str | None
    options: NotRequired[list[str]]  # option widget
    rotations: NotRequired[dict[str, str]]  # rotate widget: {"0": url, ..., "315": url}
    piece: NotRequired[str]  # drag widget


class PageData(TypedDict):
    """The page data (docs/events.md, "Page data"): public fields and asset URLs, never the truth."""

    attempt: str
    widget: Widget
    auto_submit: bool
    single_choice: bool  # cells: a click picks one cell and drops the one picked before
    person: bool  # a person's page: the study bar, status and Flag show outside the stage
    show_verdict: bool
    stats: Stats
    instruction: str
    layout: LayoutData
    images: PageImages
    socket: str
    events_url: str
    flag_url: str
    flag_reasons: list[list[str]]  # [[value, label], ...]
    flag_note_max: int  # the longest note a flag keeps
    text_max: int  # the longest text an act.type may carry
    key_max: int  # the longest key, code or input_type a raw event may carry
    batch_max: int  # the most events in one batch
    post_max: int  # the most batches in one HTTP fallback request
    beat_ms: int  # the heartbeat while the page is visible
    play_url: str
    play_data_url: str
    csrf: str
    submitted: bool
    next_seq: int
    acked: int
    seq_block: int  # a page's range of batch numbers: next_seq's page is next_seq // seq_block
    study: NotRequired[StudyBar]  # in a study only
    piece: NotRequired[PieceData]  # drag widget only


class HostedFrame(TypedDict):
    """A hosted benchmark's page (docs/hosted.md), framed at the attempt's own host."""

    frame: str  # the peer's page for this puzzle, at the attempt's host
    origin: str  # that host's origin: the only one the play page hears messages from


class HostedPageData(TypedDict):
    """The play page of a hosted attempt: our chrome (study bar, status, Flag) above the peer's page
    in a frame; the events come from the recorder inside the frame (RecorderData), never from here."""

    attempt: str
    hosted: HostedFrame
    person: bool
    show_verdict: bool
    title: str  # the family, for the window's title
    flag_url: str
    flag_reasons: list[list[str]]
    flag_note_max: int
    play_url: str
    play_data_url: str
    csrf: str
    submitted: bool
    study: NotRequired[StudyBar]


class RecorderData(TypedDict):
    """What the event recorder on a hosted page is given (static/arena/recorder.js, inlined by the
    proxy into the peer's page): the Transport's part of PageData, on the attempt's own host."""

    attempt: str
    socket: str
    events_url: str
    csrf: str  # empty: the attempt's host is the credential (docs/hosted.md), not a cookie
    key_max: int
    batch_max: int
    post_max: int
    beat_ms: int
    submitted: bool
    checked: bool  # the peer answered the final check: the page's submit is due at once
    next_seq: int
    acked: int
    seq_block: int


RECORDER_EVENTS_PATH = "/__arena/events"  # the HTTP fallback and the beacon, on the attempt's host


class DeviceCheckData(TypedDict):
    """What the join page's device check is given: the size of the page the puzzles scale."""

    stage: StageSize


def device_check_data() -> DeviceCheckData:
    return {"stage": {"w": STAGE_W, "h": STAGE_H}}


def attempt_page_data(*, attempt: Attempt, csrf_token: str, site_url: str = "") -> PageData | HostedPageData:
    """Everything the live page needs, and nothing of the truth: public fields and asset URLs only.
    A hosted attempt's page frames the peer's page at the attempt's host, beside `site_url`'s
    scheme and port (the request's own site)."""
    if is_hosted(attempt.puzzle):
        return hosted_page_data(attempt=attempt, csrf_token=csrf_token, site_url=site_url)
    puzzle = attempt.puzzle
    puzzle_type = get_type(puzzle.type)
    public: PublicData = puzzle.public
    first = attempt_new_page(attempt=attempt)
    data: PageData = {
        "attempt": attempt.uid,
        "widget": puzzle_type.widget,
        "auto_submit": puzzle_type.auto_submit,
        "single_choice": puzzle_type.single_choice,
        "person": attempt.participant.kind == Participant.Kind.HUMAN,
        "show_verdict": shows_verdict(attempt),
        "stats": _stats(attempt),
        "instruction": public["instruction"],
        "layout": puzzle_type.layout(public).as_dict(),
        "images": _image_urls(attempt),
        "socket": f"/ws/attempts/{attempt.uid}/",
        "events_url": reverse("annotation:events", args=[attempt.uid]),
        "flag_url": reverse("annotation:flag", args=[attempt.uid]),
        "flag_reasons": [[value, label] for value, label in Flag.Reason.choices],
        "flag_note_max": Flag.NOTE_MAX,
        "text_max": MAX_TEXT,
        "key_max": MAX_KEY_TEXT,
        "batch_max": MAX_EVENTS,
        "post_max": MAX_POSTED_BATCHES,
        "beat_ms": BEAT_MS,
        # For moving on in place: another attempt's page and data, "{uid}" filled in by the page.
        "play_url": url_template("annotation:play", uid="str"),
        "play_data_url": url_template("annotation:play-data", uid="str"),
        "csrf": csrf_token,
        "submitted": attempt.is_closed,
        # This load's own range of batch numbers: no other load, in this browser or another,
        # numbers a batch alike, so what an earlier load left and resends never meets a clash.
        "next_seq": first,
        "acked": first - 1,
        "seq_block": SEQ_BLOCK,
    }
    bar = study_bar(attempt=attempt)
    if bar:
        data["study"] = bar
    if "piece_size" in public:
        data["piece"] = {"size": public["piece_size"], "start": public["start_position"]}
    return data


def hosted_page_data(*, attempt: Attempt, csrf_token: str, site_url: str) -> HostedPageData:
    """The play page of a hosted attempt (HostedPageData)."""
    hosted = attempt.puzzle.public.get("hosted") or {}
    origin = attempt_origin(attempt.uid, site_url)
    data: HostedPageData = {
        "attempt": attempt.uid,
        "hosted": {"frame": origin + str(hosted.get("page") or "/"), "origin": origin},
        "person": attempt.participant.kind == Participant.Kind.HUMAN,
        "show_verdict": shows_verdict(attempt),
        "title": str(hosted.get("family") or attempt.puzzle.type),
        "flag_url": reverse("annotation:flag", args=[attempt.uid]),
        "flag_reasons": [[value, label] for value, label in Flag.Reason.choices],
        "flag_note_max": Flag.NOTE_MAX,
        "play_url": url_template("annotation:play", uid="str"),
        "play_data_url": url_template("annotation:play-data", uid="str"),
        "csrf": csrf_token,
        "submitted": attempt.is_closed,
    }
    bar = study_bar(attempt=attempt)
    if bar:
        data["study"] = bar
    return data


def recorder_data(*, attempt: Attempt) -> RecorderData:
    """The recorder's data for one load of a hosted attempt's page: a load of its own, with its own
    range of batch numbers, as a load of our page (attempt_new_page)."""
    first = attempt_new_page(attempt=attempt)
    return {
        "attempt": attempt.uid,
        "socket": f"/ws/attempts/{attempt.uid}/",
        "events_url": RECORDER_EVENTS_PATH,
        "csrf": "",
        "key_max": MAX_KEY_TEXT,
        "batch_max": MAX_EVENTS,
        "post_max": MAX_POSTED_BATCHES,
        "beat_ms": BEAT_MS,
        "submitted": attempt.is_closed,
        "checked": HostedCheck.objects.filter(attempt_id=attempt.pk, finished_at__isnull=False).exists(),
        "next_seq": first,
        "acked": first - 1,
        "seq_block": SEQ_BLOCK,
    }


def _stats(attempt: Attempt) -> Stats:
    """Like the published page's counters, which start at 0 on a fresh page: a study's counts
    run over the participant's answers in it (practice apart); any other attempt starts from
    nothing. Correct and Accuracy show where verdicts do, and on an agent's or a replay's page
    (as published)."""
    shown = shows_verdict(attempt) or attempt.participant.kind != Participant.Kind.HUMAN
    if attempt.study_id is None:
        return {"total": 0, "correct": 0 if shown else None}
    earlier = Attempt.objects.filter(
        participant_id=attempt.participant_id, study_id=attempt.study_id, submitted_at__isnull=False
    ).exclude(pk=attempt.pk)
    # Practice is not the study: it counts on the practice pages alone, never in the answers after it.
    practice = Attempt.Purpose.PRACTICE
    earlier = earlier.filter(purpose=practice) if attempt.purpose == practice else earlier.exclude(purpose=practice)
    return {"total": earlier.count(), "correct": earlier.filter(correct=True).count() if shown else None}


def _image_urls(attempt: Attempt) -> PageImages:
    """Asset URLs by their role in the public data (every asset has a random file name)."""
    public: PublicData = attempt.puzzle.public
    url = {asset.key: asset.file.url for asset in attempt.puzzle.assets.all()}
    reference = public.get("reference")
    images: PageImages = {"image": url[public["image"]], "reference": url.get(reference) if reference else None}
    if "options" in public:
        images["options"] = [url[key] for key in public["options"]]
    if "rotations" in public:
        images["rotations"] = {angle: url[key] for angle, key in public["rotations"].items()}
    if "piece" in public:
        images["piece"] = url[public["piece"]]
    return images


def _practice_left(attempt: Attempt) -> int:
    """Practice puzzles of the study this participant has not submitted yet, this one aside."""
    study = attempt.study
    if study is None or attempt.purpose != Attempt.Purpose.PRACTICE:
        return 0
    done = Attempt.objects.filter(
        study=study, participant_id=attempt.participant_id, submitted_at__isnull=False
    ).values("puzzle_id")
    return study.practice.exclude(pk=attempt.puzzle_id).exclude(pk__in=done).count()


def study_bar(*, attempt: Attempt) -> StudyBar | None:
    """The study part of an attempt's page: where the annotator stands, where to go next."""
    study = attempt.study
    if study is None:
        return None
    enrollment = Enrollment.objects.filter(study=study, participant_id=attempt.participant_id).first()
    if enrollment is None:
        return None
    return {
        "name": study.name,
        # Gold puzzles look like any other: a person who knew which ones are checked could take
        # care on those alone.
        "practice": attempt.purpose == Attempt.Purpose.PRACTICE,
        "practice_left": _practice_left(attempt),
        "done": enrollment.puzzles_done(),
        "total": study.puzzles_total(),
        "time_limit_s": study.time_limit_s,
        # The limit counts the time on screen since the puzzle was first served, across reloads
        # and devices; a pause ended with this serving is left out (live/timing.py, "On screen").
        "elapsed_ms": round(attempt_on_screen_ms(attempt=attempt, until_ms=timezone.now().timestamp() * 1000)),
        "next_url": reverse("annotation:study-next", args=[study.token]),
        "pause_url": reverse("annotation:study-pause", args=[study.token]),
    }
