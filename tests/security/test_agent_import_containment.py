"""An agent output folder is untrusted: `agent import` reads it without leaving it, `agent export`
writes without leaving its folder, and no stored turn stops the staff's rollout page.

Each attack is a real folder on disk (real symbolic links) run through the real management
commands, and pages fetched from the real views as a staff user.
"""

import io
import json
import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client

from annotation.agents.trajectories import save_screenshot
from annotation.models import AgentRun, Rollout, Turn
from puzzles.models import Puzzle
from puzzles.services import bank_generate
from tests.agents.test_outputs import png, published_rollout

pytestmark = pytest.mark.django_db

SECRET = "SECRET_KEY=django-insecure-the-sites-own-0xC0FFEE"


@pytest.fixture(autouse=True)
def _private_in_tmp(settings, tmp_path):
    settings.PRIVATE_ROOT = tmp_path / "private"


@pytest.fixture
def bank():
    """Two Geometry_Click and two Bingo puzzles; the published type folders carry a count of 200."""
    bank_generate(split="test", per_type=2, types=["Geometry_Click", "Bingo"], bank_seed=5, workers=1)
    return {(p.type, p.source_id): p for p in Puzzle.objects.all()}


@pytest.fixture
def secrets(tmp_path) -> Path:
    """The site's own files, outside the folder handed to the import: what a link in it aims at."""
    site = tmp_path / "site"
    site.mkdir()
    (site / ".env").write_text(SECRET + "\n")
    return site


def rollout_of(folder: Path, *, type_folder: str, stem: str, prompt: str = "Click the circle.") -> Path:
    """One good published rollout (one click, screenshots 0 and 1)."""
    steps = [("I see it.", 'click({"x": 402, "y": 377})', "clicked (402, 377) button=left")]
    published_rollout(folder, type_folder=type_folder, stem=stem, steps=steps, submitted=True, correct=True,
                      status="done", prompt=prompt)  # fmt: skip
    return folder


def run_command(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def staff() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("admin", is_staff=True))
    return client


def skipped(err: str, path: Path) -> str:
    """The stderr line naming a skipped path, or "" when none does."""
    return next((line for line in err.splitlines() if line.startswith(f"skipped {path}")), "")


def files_under(folder: Path) -> list[Path]:
    """Every file and link under a folder, links not followed."""
    found = []
    for where, folders, files in os.walk(folder):
        found += [Path(where) / name for name in files + [f for f in folders if (Path(where) / f).is_symlink()]]
    return found


def test_links_in_an_output_folder_are_named_and_never_followed(bank, secrets, tmp_path):
    root = tmp_path / "runs" / "crafted"
    place = root / "geometry_click_200" / "Geometry_Click_200_00001"
    rollout_of(place / "rollout_1", type_folder="Geometry_Click_200", stem="00001")
    rollout_of(root / "bingo_200" / "Bingo_200_00000", type_folder="Bingo_200", stem="00000")
    # a screenshot that is a link to the site's secrets
    shot = rollout_of(place / "rollout_2", type_folder="Geometry_Click_200", stem="00001") / "screenshots"
    (shot / "screenshot_step_1.png").unlink()
    (shot / "screenshot_step_1.png").symlink_to(secrets / ".env")
    # a metafile.json that is a link to a JSON file outside, holding the secret
    (secrets / "steps.json").write_text(json.dumps({"steps": [{"reasoning": SECRET, "action": "screenshot"}]}))
    meta = rollout_of(place / "rollout_3", type_folder="Geometry_Click_200", stem="00001") / "metafile.json"
    meta.unlink()
    meta.symlink_to(secrets / "steps.json")
    # a summary.json that is a link (to a summary outside naming a stored puzzle, the secret its prompt)
    outside = rollout_of(secrets / "elsewhere", type_folder="Bingo_200", stem="00001", prompt=SECRET)
    (root / "bingo_200" / "Bingo_200_00001").mkdir(parents=True)
    (root / "bingo_200" / "Bingo_200_00001" / "summary.json").symlink_to(outside / "summary.json")
    # a rollout folder that is a link to a whole rollout outside
    (place / "rollout_4").symlink_to(outside, target_is_directory=True)

    out, err = run_command("agent", "import", str(root), "--name", "crafted")

    assert out.strip() == "import: 2 puzzles matched into run 'crafted', 0 unmatched", err
    run = AgentRun.objects.get(name="crafted")
    geometry, bingo = bank[("Geometry_Click", "00001")], bank[("Bingo", "00000")]
    assert sorted(run.rollouts.values_list("puzzle_id", "index")) == sorted([(geometry.pk, 0), (bingo.pk, 0)])
    assert "screenshot_step_1.png" in skipped(err, place / "rollout_2") and "symbolic link" in err
    assert "metafile.json is a symbolic link" in skipped(err, place / "rollout_3")
    assert "symbolic link" in skipped(err, root / "bingo_200" / "Bingo_200_00001" / "summary.json")
    assert "symbolic link" in skipped(err, place / "rollout_4")
    assert_secret_nowhere(run, tmp_path)


def assert_secret_nowhere(run: AgentRun, tmp_path: Path) -> None:
    """Not in the database, the stored screenshots, the staff's pages, nor an export (whose every
    file lies inside its folder)."""
    for model in (AgentRun, Rollout, Turn):
        assert not [row for row in model.objects.values() if SECRET in str(row)], model
    kept = [p for p in files_under(tmp_path / "private") if p.is_file()]
    assert kept and not [p for p in kept if SECRET.encode() in p.read_bytes()]
    client = staff()
    for rollout in run.rollouts.all():
        page = client.get(f"/agents/rollouts/{rollout.pk}/")
        assert page.status_code == 200 and SECRET not in page.content.decode()
        for step in range(3):
            shot = client.get(f"/agents/rollouts/{rollout.pk}/screenshots/{step}.png")
            assert shot.status_code == 404 or SECRET.encode() not in b"".join(shot.streaming_content)
    export = tmp_path / "export"
    out, err = run_command("agent", "export", run.name, str(export))
    assert out.strip() == f"export: 2 rollouts written to {export}" and not err
    written = files_under(export)
    assert written and all(export.resolve() in p.resolve().parents and not p.is_symlink() for p in written)
    assert not [p for p in written if SECRET.encode() in p.read_bytes()]


def test_an_entry_that_does_not_fit_is_named_and_skipped_the_rest_imported(bank, tmp_path):
    root = tmp_path / "runs" / "crafted"
    place = root / "geometry_click_200" / "Geometry_Click_200_00001"
    rollout_of(place / "rollout_1", type_folder="Geometry_Click_200", stem="00001")
    rollout_of(root / "bingo_200" / "Bingo_200_00000", type_folder="Bingo_200", stem="00000")
    (root / "arena_run.json").write_text(json.dumps({"model": "m" * 5000, "protocol": ["not", "text"]}))
    # our export's arena_turns.json, a turn's error over its 300 characters
    long_error = rollout_of(place / "rollout_2", type_folder="Geometry_Click_200", stem="00001")
    turn = {"number": 0, "seen": 0, "request": [], "reply": None, "calls": [], "error": "x" * 5000}
    (long_error / "arena_turns.json").write_text(json.dumps({"rollout": {}, "turns": [turn]}))
    # a turn number past its small integer, tokens of the wrong type
    for name, field, value in (("rollout_3", "seen", 10**30), ("rollout_4", "tokens_in", "many")):
        folder = rollout_of(place / name, type_folder="Geometry_Click_200", stem="00001")
        bad = {"number": 0, "seen": 0, "request": [], "reply": None, "calls": [], field: value}
        (folder / "arena_turns.json").write_text(json.dumps({"rollout": {}, "turns": [bad]}))
    # a NUL in the instruction, which PostgreSQL's text refuses
    nul = rollout_of(place / "rollout_5", type_folder="Geometry_Click_200", stem="00001", prompt="Click\x00 it")
    # a metafile nested past any published one, and past Python's parser
    deep = rollout_of(place / "rollout_6", type_folder="Geometry_Click_200", stem="00001")
    (deep / "metafile.json").write_text('{"steps": ' + "[" * 100_000 + "]" * 100_000 + "}")
    # a rollout number past the small integer its index is kept in
    rollout_of(place / "rollout_99999", type_folder="Geometry_Click_200", stem="00001")
    # ids that could become paths
    traversal = rollout_of(root / "bingo_200" / "up", type_folder="Bingo_200", stem="../../../etc/passwd")
    control = rollout_of(root / "bingo_200" / "ctl", type_folder="Bingo\x1b[2J", stem="00001")

    out, err = run_command("agent", "import", str(root), "--name", "crafted")

    assert out.strip() == "import: 2 puzzles matched into run 'crafted', 0 unmatched", err
    run = AgentRun.objects.get(name="crafted")
    geometry, bingo = bank[("Geometry_Click", "00001")], bank[("Bingo", "00000")]
    assert sorted(run.rollouts.values_list("puzzle_id", "index")) == sorted([(geometry.pk, 0), (bingo.pk, 0)])
    assert (run.model, run.protocol, run.rollouts_per_puzzle) == ("", "", 1)
    assert "skipped the run's model: not text of at most 200 characters" in err
    assert "skipped the run's protocol: not text of at most 32 characters" in err
    assert "turn 0: error: Ensure this value has at most 300 characters" in skipped(err, long_error)
    assert "turn 0: seen: Ensure this value is less than or equal to 32767" in skipped(err, place / "rollout_3")
    assert "turn 0: tokens_in:" in skipped(err, place / "rollout_4")
    assert "not storable" in skipped(err, nul)
    assert "metafile.json is not JSON" in skipped(err, deep)
    assert "out of range" in skipped(err, place / "rollout_99999" / "summary.json")
    assert "holds a path separator" in skipped(err, traversal / "summary.json")
    assert "holds a control character" in skipped(err, control / "summary.json")
    assert len(list((tmp_path / "private" / "agents").iterdir())) == 2  # the two imported rollouts' screenshots


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")  # Pillow warns past 16 Mpx
def test_a_screenshot_that_is_no_png_or_too_large_skips_its_rollout(bank, secrets, tmp_path):
    from PIL import Image

    root = tmp_path / "runs" / "crafted"
    place = root / "geometry_click_200" / "Geometry_Click_200_00001"
    rollout_of(place / "rollout_1", type_folder="Geometry_Click_200", stem="00001")
    text = rollout_of(place / "rollout_2", type_folder="Geometry_Click_200", stem="00001")
    (text / "screenshots" / "screenshot_step_0.png").write_text(SECRET)  # a copy, not a link: still no PNG
    huge = rollout_of(place / "rollout_3", type_folder="Geometry_Click_200", stem="00001")
    buffer = io.BytesIO()
    # 12 M pixels in a few kB: over our cap, under Pillow's own refusal (twice the cap), so the
    # header check is what refuses it.
    Image.new("1", (3500, 3500)).save(buffer, format="PNG")
    (huge / "screenshots" / "screenshot_step_0.png").write_bytes(buffer.getvalue())

    out, err = run_command("agent", "import", str(root), "--name", "crafted")

    assert "1 puzzles matched" in out
    assert "screenshot_step_0.png is not a PNG" in skipped(err, text)
    assert "screenshot_step_0.png is 3500x3500" in skipped(err, huge)
    run = AgentRun.objects.get(name="crafted")
    assert list(run.rollouts.values_list("index", flat=True)) == [0]
    assert not [p for p in files_under(tmp_path / "private") if SECRET.encode() in p.read_bytes()]


def test_an_export_never_writes_through_a_link_in_its_folder(bank, tmp_path):
    root = tmp_path / "runs" / "good"
    rollout_of(root / "geometry_click_200" / "Geometry_Click_200_00001", type_folder="Geometry_Click_200", stem="00001")
    rollout_of(root / "bingo_200" / "Bingo_200_00000", type_folder="Bingo_200", stem="00000")
    assert "2 puzzles matched" in run_command("agent", "import", str(root), "--name", "good")[0]
    elsewhere, export = tmp_path / "elsewhere", tmp_path / "export"
    elsewhere.mkdir()
    export.mkdir()
    (elsewhere / "keep.json").write_text("the site's own file")
    (export / "bingo_2").symlink_to(elsewhere, target_is_directory=True)  # the export's type folder for Bingo
    (export / "arena_run.json").symlink_to(elsewhere / "keep.json")

    out, err = run_command("agent", "export", "good", str(export))

    assert out.strip() == f"export: 1 rollouts written to {export}"
    assert "left out rollout" in err and "'bingo_2/Bingo_2_00000'" in err and "leaves the output folder" in err
    assert "arena_run.json is a symbolic link, not written through" in err
    assert [p.name for p in elsewhere.iterdir()] == ["keep.json"]
    assert (elsewhere / "keep.json").read_text() == "the site's own file"
    written = [p for p in files_under(export) if not p.is_symlink()]
    assert written and all(export.resolve() in p.resolve().parents for p in written)
    assert (export / "geometry_click_2" / "Geometry_Click_2_00001" / "summary.json").is_file()


def test_a_malformed_stored_turn_renders_as_unreadable_never_a_500(bank):
    puzzle = bank[("Bingo", "00000")]
    run = AgentRun.objects.create(name="crafted turns", model="m", puzzles=[puzzle.pk])
    rollout = Rollout.objects.create(run=run, puzzle=puzzle, index=0, status="done", steps=1)
    good = {"name": "click", "arguments": {"x": 402, "y": 377}, "applied": None, "result": "clicked", "screenshot": 1}
    crafted = [
        {"reply": "a reply that is a string", "calls": []},
        {"reply": {"content": ["not", "text"]}, "calls": []},
        {"reply": None, "calls": ["not a call", 1]},
        {"reply": None, "calls": {"name": "click"}},
        {"reply": None, "calls": [{"arguments": {"x": 1, "y": 2}}]},  # no name
        {"reply": None, "calls": [{**good, "arguments": [402, 377]}]},
        {"reply": None, "calls": [{**good, "screenshot": "../../etc"}]},
        {"reply": None, "calls": [{**good, "screenshot": -1}]},
        {"reply": None, "calls": [{**good, "arguments": {"x": 10**400, "y": 1}}]},  # past a float: no marker
        {"reply": None, "calls": [{**good, "arguments": {"x": json.loads("[" * 40 + "]" * 40)}}]},
    ]
    # Straight in PostgreSQL, as Django would not write them: a number past Python's int parsing,
    # and calls nested past Python's JSON parser (PostgreSQL keeps them).
    raw = ['[{"name": "click", "arguments": {"x": 1' + "0" * 5000 + "}}]", "[" * 2000 + "]" * 2000]
    Turn.objects.create(rollout=rollout, number=0, reply={"content": "the good turn"}, calls=[good])
    for number, fields in enumerate(crafted + [{}] * len(raw), start=1):
        Turn.objects.create(rollout=rollout, number=number, seen=0, **fields)
    with connection.cursor() as cursor:
        for number, calls in enumerate(raw, start=len(crafted) + 1):
            cursor.execute(
                "UPDATE annotation_turn SET calls = %s::jsonb WHERE rollout_id = %s AND number = %s",
                [calls, rollout.pk, number],
            )
    save_screenshot(rollout.pk, 0, png((0, 0, 0)))

    response = staff().get(f"/agents/rollouts/{rollout.pk}/")

    assert response.status_code == 200
    page = response.content.decode()
    # all but the float-overflow one (readable: shown without its marker) are unreadable
    assert page.count("Unreadable turn") == len(crafted) - 1 + len(raw)
    assert "the good turn" in page and '<circle class="marker" cx="402.0" cy="377.0" r="16"/>' in page
    assert "1" + "0" * 400 in page  # the readable one shows its arguments


def test_a_lone_surrogate_skips_its_rollout_or_empties_the_runs_text(bank, tmp_path):
    """A lone surrogate is no UTF-8: psycopg cannot encode it (a ValueError, not a database error).
    Its rollout is named and skipped, the run's model left empty, the rest imported."""
    root = tmp_path / "runs" / "crafted"
    place = root / "geometry_click_200" / "Geometry_Click_200_00001"
    rollout_of(place / "rollout_1", type_folder="Geometry_Click_200", stem="00001")
    rollout_of(root / "bingo_200" / "Bingo_200_00000", type_folder="Bingo_200", stem="00000")
    lone = rollout_of(place / "rollout_2", type_folder="Geometry_Click_200", stem="00001") / "summary.json"
    lone.write_text(json.dumps({**json.loads(lone.read_text()), "prompt": "Click \ud800"}))  # the escape \ud800
    (root / "arena_run.json").write_text(json.dumps({"model": "m \ud800", "protocol": "openai"}))

    out, err = run_command("agent", "import", str(root), "--name", "crafted")

    assert out.strip() == "import: 2 puzzles matched into run 'crafted', 0 unmatched", err
    run = AgentRun.objects.get(name="crafted")
    assert (run.model, run.protocol, run.rollouts.count()) == ("", "openai", 2)
    assert "instruction: not storable" in skipped(err, lone.parent)
    assert "skipped the run's model: not text" in err
