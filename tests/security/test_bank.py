"""The bank cannot be rebuilt offline, and a study whose answers are public says so.

The red team's bot regenerated the split with the public code and its default seed, indexed the
images by hash and submitted the truth of whatever image the page showed. Here the attacker does
exactly that, in process with the public bank functions, against a deployment with its own secret.
"""

import hashlib
import io
import json
import os
import secrets
import stat
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from PIL import Image

from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.studies.setup import public_truth_warning, study_create
from arena_site.bank_secret import bank_secret
from puzzles.bank import bank_key, generate_puzzle, split_code
from puzzles.encoding import encode_image, encode_puzzle
from puzzles.interop import export_captchaarena, import_captchaarena
from puzzles.models import Asset, Puzzle
from puzzles.registry import get_type, registry
from puzzles.services import bank_generate

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent.parent
OLD_DEFAULT_SEED = 20260  # what PUZZLE_BANK_SEED defaulted to in the public source
GUESSED_SECRETS = ("20260", "", "change-me-in-production", "dev-only-insecure-key-do-not-deploy")
PER_TYPE = 2


@pytest.fixture
def deployment(settings):
    """A deployment with a real secret of its own, and its generated bank stored as served."""
    settings.PUZZLE_BANK_SECRET = secrets.token_urlsafe(48)
    bank_generate(split="test", per_type=PER_TYPE, workers=1)
    return settings.PUZZLE_BANK_SECRET


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _served() -> dict[str, Asset]:
    return {_sha(asset.file.read()): asset for asset in Asset.objects.select_related("puzzle")}


def _old_public_generation(name: str, index: int):
    """The bank as the public code made it before the secret: a seed anyone can read."""
    rng = np.random.default_rng([OLD_DEFAULT_SEED, zlib.crc32(name.encode()), split_code("test"), index])
    return get_type(name).generate(rng)


def _attackers_hashes() -> set[str]:
    """Every image an attacker with the code can make for the served puzzles' (type, split, index)."""
    found = set()
    for name in registry().names():
        for index in range(PER_TYPE):
            old = _old_public_generation(name, index)
            found |= {_sha(encode_image(k, image, None).data) for k, image in old.images.items()}
            for guess in GUESSED_SECRETS:
                bank = bank_key(secret=guess)
                for key, image in generate_puzzle(name, "test", index, bank).images.items():
                    found.add(_sha(encode_image(key, image, None).data))
                    found.add(_sha(encode_image(key, image, bank.rng("image", name, "test", index, key)).data))
    return found


def test_an_offline_rebuild_with_the_public_code_matches_no_served_image(deployment):
    served = _served()
    assert len(served) == Asset.objects.count() > 2 * len(registry().names())
    attacker = _attackers_hashes()
    assert len(attacker) > len(served)
    assert attacker.isdisjoint(served)
    # The comparison can fail: with the deployment's secret, the same code finds every image.
    insider = {
        _sha(image.data)
        for name in registry().names()
        for index in range(PER_TYPE)
        for image in encode_puzzle((name, "test", index, bank_key(secret=deployment))).images
    }
    assert insider == set(served)


def _pixels(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def test_the_same_picture_is_served_with_other_bytes_but_no_visible_change(deployment):
    worst = 0
    for asset in Asset.objects.select_related("puzzle"):
        puzzle = asset.puzzle
        picture = generate_puzzle(puzzle.type, puzzle.split, puzzle.index).images[asset.key]
        public = encode_image(asset.key, picture, None).data  # what the public encoder makes of it
        served = asset.file.read()
        assert _sha(served) != _sha(public), (puzzle.type, asset.key)
        a, b = _pixels(served), _pixels(public)
        assert (a.size, a.mode) == (b.size, b.mode) == ((asset.width, asset.height), a.mode)
        diff = np.abs(np.asarray(a, dtype=np.int16) - np.asarray(b, dtype=np.int16))
        worst = max(worst, int(diff.max()))
        if a.mode == "RGBA":
            alpha = np.asarray(a)[:, :, 3]
            assert diff[:, :, 3].max() == 0  # alpha never moves
            assert diff[alpha == 0].max(initial=0) == 0  # nor a fully transparent pixel
    assert 1 <= worst <= 2


def test_truth_and_masks_are_untouched_and_every_solution_still_verifies(deployment):
    puzzles = list(Puzzle.objects.prefetch_related("assets"))
    assert {p.type for p in puzzles} == set(registry().names())
    for puzzle in puzzles:
        fresh = generate_puzzle(puzzle.type, puzzle.split, puzzle.index)
        puzzle_type = get_type(puzzle.type)
        assert puzzle.truth == json.loads(json.dumps(fresh.truth))
        masks = puzzle.load_masks()
        assert masks.keys() == fresh.masks.keys()
        assert all(np.array_equal(masks[k], fresh.masks[k]) for k in masks)
        assert puzzle_type.verify(puzzle.truth, puzzle_type.solution(puzzle.truth), masks).correct, puzzle.type
        for asset in puzzle.assets.all():
            image = _pixels(asset.file.read())
            expected = fresh.images[asset.key]
            assert image.size == expected.size == (asset.width, asset.height)
            assert image.mode == ("RGBA" if expected.mode == "RGBA" else "RGB")


def test_regenerating_the_deployments_bank_stores_nothing_new(deployment):
    before = {_sha(a.file.read()) for a in Asset.objects.all()}
    again = bank_generate(split="test", per_type=PER_TYPE, workers=1)
    assert (again.created, again.skipped) == (0, PER_TYPE * len(registry().names()))
    assert {_sha(a.file.read()) for a in Asset.objects.all()} == before
    label = Puzzle.objects.values_list("dataset", flat=True).distinct().get()
    assert label.startswith("generated:key-") and deployment not in label and str(OLD_DEFAULT_SEED) not in label


# --- a public dataset's images are re-encoded on import too ----------------------------------
def _published(root: Path) -> dict[str, bytes]:
    """A Dice_Count split in the published layout with images of every awkward kind."""
    folder = root / "Test" / "Dice_Count_3"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    rgba = rng.integers(0, 256, (60, 80, 4), dtype=np.uint8)
    rgba[:20, :, 3] = 0  # a fully transparent band
    rgba[20:, :, 3] = 255
    palette = Image.fromarray(rng.integers(0, 4, (60, 80), dtype=np.uint8), "L").convert("P")
    palette.putpalette([0, 0, 0, 250, 10, 10, 10, 250, 10, 255, 255, 255])
    images = {
        "rgb.png": Image.fromarray(rng.integers(0, 256, (60, 80, 3), dtype=np.uint8), "RGB"),
        "rgba.png": Image.fromarray(rgba, "RGBA"),
        "palette.png": palette,
    }
    files = {}
    for name, image in images.items():
        buffer = io.BytesIO()
        image.save(buffer, "PNG", **({"transparency": 0} if image.mode == "P" else {}))
        files[name] = buffer.getvalue()
        (folder / name).write_bytes(files[name])
    (folder / "ground_truth.json").write_text(json.dumps({name: {"sum": 7} for name in files}))
    return files


def test_an_imported_public_dataset_is_served_with_other_bytes_and_the_same_look(tmp_path):
    published = _published(tmp_path)
    assert import_captchaarena(tmp_path, name="published").imported == 3
    served = _served()
    assert not {_sha(data) for data in published.values()} & set(served)
    for puzzle in Puzzle.objects.filter(dataset="import:published"):
        original = _pixels(published[puzzle.source_id])
        copy = _pixels(puzzle.assets.get().file.read())
        assert (copy.size, copy.mode) == (original.size, original.mode)
        a = np.asarray(original.convert("RGBA"), dtype=np.int16)
        b = np.asarray(copy.convert("RGBA"), dtype=np.int16)
        assert np.abs(a - b).max() == 1
        assert np.array_equal(a[:, :, 3], b[:, :, 3])  # what is transparent stays so, and nothing else
        transparent = a[:, :, 3] == 0
        assert np.array_equal(a[transparent], b[transparent])
        assert puzzle.truth_public


# --- the secret ------------------------------------------------------------------------------
def _settings_process(tmp_path, *, debug: bool, secret: str | None) -> subprocess.CompletedProcess:
    dropped = ("DATABASE_URL", "CI", "DEBUG", "SECRET_KEY", "PUZZLE_BANK_SECRET", "PYTEST_VERSION")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(DEBUG="true" if debug else "false", SECRET_KEY=secrets.token_urlsafe(50), ARENA_VAR_DIR=str(tmp_path))
    if secret is not None:
        env["PUZZLE_BANK_SECRET"] = secret
    program = "import django; django.setup(); from django.conf import settings; print(settings.PUZZLE_BANK_SECRET)"
    return subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("secret", "why"),
    [
        (None, "PUZZLE_BANK_SECRET must be set"),
        ("x7Kq2pLm9Zr4", "fewer than 32"),
        ("20260", "known value"),
        ("change-me-change-me-change-me-change-me", "placeholder"),
        ("ab" * 20, "distinct characters"),
    ],
)
def test_outside_debug_a_missing_short_or_known_secret_stops_the_site(tmp_path, secret, why):
    done = _settings_process(tmp_path, debug=False, secret=secret)
    assert done.returncode != 0
    assert "PUZZLE_BANK_SECRET" in done.stderr and why in done.stderr
    if secret:
        assert secret not in done.stderr  # the refusal never prints the value


def test_outside_debug_a_long_random_secret_is_used(tmp_path):
    secret = secrets.token_urlsafe(48)
    done = _settings_process(tmp_path, debug=False, secret=secret)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == secret
    assert not (tmp_path / "bank-secret").exists()


def test_with_debug_and_no_secret_one_is_made_once_and_kept_private(tmp_path):
    first = _settings_process(tmp_path, debug=True, secret=None)
    again = _settings_process(tmp_path, debug=True, secret=None)
    assert first.returncode == again.returncode == 0, first.stderr
    kept = (tmp_path / "bank-secret").read_text().strip()
    assert first.stdout.strip() == again.stdout.strip() == kept and len(kept) >= 32
    assert stat.S_IMODE((tmp_path / "bank-secret").stat().st_mode) == 0o600  # its owner's alone


def test_a_value_from_env_example_is_refused(tmp_path, monkeypatch):
    published = "k" + secrets.token_urlsafe(40)  # long and random-looking, but in the repository
    (tmp_path / ".env.example").write_text(f"# settings\nPUZZLE_BANK_SECRET={published}\n")
    monkeypatch.setenv("PUZZLE_BANK_SECRET", published)
    with pytest.raises(ImproperlyConfigured, match="PUZZLE_BANK_SECRET is refused: it is a known value"):
        bank_secret(debug=False, var_dir=tmp_path, base_dir=tmp_path)
    assert bank_secret(debug=True, var_dir=tmp_path, base_dir=tmp_path) == published  # DEBUG: yours to use


def test_the_retired_seed_setting_is_not_silently_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("PUZZLE_BANK_SEED", "20260")
    with pytest.raises(ImproperlyConfigured, match="PUZZLE_BANK_SEED is no longer read"):
        bank_secret(debug=True, var_dir=tmp_path, base_dir=tmp_path)


# --- public truth: a study property ----------------------------------------------------------
@pytest.fixture
def public_and_private(verified, tmp_path):
    """Three private generated Dice_Count puzzles and three imported from a published dataset."""
    private = verified(types=("Dice_Count",), per_type=3)
    export_captchaarena(tmp_path, split="test", dataset=private[0].dataset)
    import_captchaarena(tmp_path, name="captcha-arena-test")  # published splits: public by default
    public = Puzzle.objects.filter(dataset="import:captcha-arena-test")
    public.update(status=Puzzle.Status.VERIFIED)
    return private, list(public)


def test_a_study_on_public_truth_puzzles_warns_and_its_report_states_it(public_and_private):
    private, public = public_and_private
    assert len(public) == 3 and all(p.truth_public for p in public) and not any(p.truth_public for p in private)
    study = study_create(name="Published", split="test", types=["Dice_Count"], puzzles_per_annotator=2)
    warning = public_truth_warning(study)
    assert warning and "Public truth on 3 puzzles" in warning and "look them up" in warning

    report = study_report(study=study)
    assert report["public_truth_puzzles"] == 3
    assert "truth is public" in report["rules"]
    markdown = render(report, "md")
    assert "> **Warning:** Public truth on 3 puzzles" in markdown
    html = render(report, "html")
    assert "Public truth on 3 puzzles" in html and "puzzles with public truth" in html


def test_a_study_on_private_puzzles_carries_no_warning(verified):
    verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="Private", split="test", puzzles_per_annotator=2)
    assert public_truth_warning(study) is None
    report = study_report(study=study)
    assert report["public_truth_puzzles"] == 0
    assert "Warning" not in render(report, "md") and "Public truth" not in render(report, "html")


def test_public_truth_gold_counts_too(public_and_private):
    _, public = public_and_private
    Puzzle.objects.filter(pk__in=[p.pk for p in public]).update(status=Puzzle.Status.DRAFT)
    public[0].status = Puzzle.Status.VERIFIED
    public[0].save()
    study = study_create(name="Gold", split="test", puzzles_per_annotator=1, types=["Dice_Count"], gold=[public[0]])
    assert "Public truth on 1 puzzle:" in public_truth_warning(study)
    assert study_report(study=study)["public_truth_puzzles"] == 1


def test_the_staff_pages_warn_before_and_after_and_mark_the_study(public_and_private):
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("staff", is_staff=True))
    before = staff.get("/studies/new/").content.decode()
    assert "Public truth." in before and "3 in split test" in before
    created = staff.post(
        "/studies/new/",
        {
            "name": "Published",
            "split": "test",
            "types": ["Dice_Count"],
            "puzzles_per_annotator": 2,
            "overlap": 1,
            "order": "shuffled",
            "seed": 0,
            "attempts_per_puzzle": 1,
        },
        follow=True,
    )
    page = created.content.decode()
    assert created.status_code == 200 and "Draft “Published” saved." in page
    assert 'class="card warning"' in page and "Public truth on 3 puzzles" in page
    assert "public truth: 3 puzzles" in staff.get("/studies/").content.decode()
    assert 'style="' not in before + page  # a CSP is coming: classes only
