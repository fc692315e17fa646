"""Storing generated puzzles: determinism through storage, opaque asset names, masks, idempotence,
and the bank secret every generated puzzle derives from."""

import json
import secrets

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from puzzles.bank import bank_key, generate_puzzle
from puzzles.models import Asset, Puzzle
from puzzles.registry import UnknownPuzzleType, get_type
from puzzles.services import bank_generate

pytestmark = pytest.mark.django_db

MASK_TYPE = "Geometry_Click"


def _snapshot(split="test"):
    out = {}
    for puzzle in Puzzle.objects.filter(split=split).prefetch_related("assets"):
        assets = {a.key: a.file.read() for a in puzzle.assets.all()}
        out[(puzzle.type, puzzle.index)] = (
            json.dumps(puzzle.truth, sort_keys=True),
            json.dumps(puzzle.public, sort_keys=True),
            assets,
            bytes(puzzle.masks),
        )
    return out


def test_generate_stores_puzzles_with_public_assets_and_private_truth():
    result = bank_generate(split="test", per_type=2, types=[MASK_TYPE, "Dice_Count"], bank_seed=5, workers=1)
    assert (result.created, result.skipped) == (4, 0)
    puzzle = Puzzle.objects.get(type=MASK_TYPE, index=1)
    assert puzzle.dataset == "generated:5" and puzzle.source_id == "00001"
    assert set(puzzle.public) >= {"instruction", "image", "image_size"}
    assert puzzle.truth == json.loads(json.dumps(generate_puzzle(MASK_TYPE, "test", 1, 5).truth))
    asset = puzzle.assets.get(key=puzzle.public["image"])
    assert (asset.width, asset.height) == tuple(puzzle.public["image_size"])
    # The stored name says nothing about the puzzle: no type, split, index or key.
    name = asset.file.name.lower()
    for telling in ("geometry", "test", "image", "00001", "mask", puzzle.uid.lower()):
        assert telling not in name
    assert not Asset.objects.filter(key__icontains="mask").exists()


def test_masks_survive_storage_and_the_stored_truth_verifies():
    bank_generate(split="test", per_type=3, types=[MASK_TYPE], bank_seed=5, workers=1)
    puzzle_type = get_type(MASK_TYPE)
    for puzzle in Puzzle.objects.filter(type=MASK_TYPE):
        stored = puzzle.load_masks()
        fresh = generate_puzzle(MASK_TYPE, "test", puzzle.index, 5).masks
        assert stored.keys() == fresh.keys()
        assert all(np.array_equal(stored[k], fresh[k]) for k in fresh)
        assert puzzle_type.verify(puzzle.truth, puzzle_type.solution(puzzle.truth), stored).correct


def test_regenerating_gives_identical_truth_and_assets():
    bank_generate(split="test", per_type=10, types=[MASK_TYPE, "Dice_Count"], bank_seed=9, workers=1)
    first = _snapshot()
    Puzzle.objects.all().delete()
    bank_generate(split="test", per_type=10, types=[MASK_TYPE, "Dice_Count"], bank_seed=9, workers=2)
    assert _snapshot() == first


def test_a_second_run_skips_what_is_stored_and_continues_where_asked():
    bank_generate(split="val", per_type=2, types=[MASK_TYPE], bank_seed=1, workers=1)
    again = bank_generate(split="val", per_type=3, types=[MASK_TYPE], bank_seed=1, workers=1)
    assert (again.created, again.skipped) == (1, 2)
    assert sorted(Puzzle.objects.values_list("index", flat=True)) == [0, 1, 2]


def test_the_bank_seed_changes_the_puzzles():
    bank_generate(split="test", per_type=1, types=[MASK_TYPE], bank_seed=1, workers=1)
    bank_generate(split="test", per_type=1, types=[MASK_TYPE], bank_seed=2, workers=1)
    truths = [p.truth for p in Puzzle.objects.filter(type=MASK_TYPE)]
    assert len(truths) == 2 and truths[0] != truths[1]


def test_type_is_validated_against_the_registry():
    puzzle = Puzzle(type="Not_A_Type", split="test", dataset="x", source_id="1", public={}, truth={})
    with pytest.raises(ValidationError, match="unknown puzzle type"):
        puzzle.full_clean()
    with pytest.raises(UnknownPuzzleType, match="unknown puzzle type"):
        bank_generate(split="test", per_type=1, types=["Not_A_Type"])


def test_unknown_split_is_refused():
    with pytest.raises(ValueError, match="unknown split"):
        bank_generate(split="holdout", per_type=1)


def test_the_secret_changes_the_puzzles_and_an_explicit_seed_never_replaces_it(settings):
    settings.PUZZLE_BANK_SECRET = "a" + secrets.token_urlsafe(40)
    first = generate_puzzle(MASK_TYPE, "test", 0, 4)
    assert json.dumps(generate_puzzle(MASK_TYPE, "test", 0, 4).truth) == json.dumps(first.truth)  # pure
    settings.PUZZLE_BANK_SECRET = "b" + secrets.token_urlsafe(40)
    second = generate_puzzle(MASK_TYPE, "test", 0, 4)
    assert first.truth != second.truth
    assert not np.array_equal(np.asarray(first.images["image"]), np.asarray(second.images["image"]))


def test_bank_labels_name_an_explicit_seed_or_a_fingerprint_of_the_secret(settings):
    settings.PUZZLE_BANK_SECRET = secret = secrets.token_urlsafe(48)
    assert bank_key(7).label == "generated:7"  # tests and benches find their puzzles by it
    own = bank_key().label
    assert own.startswith("generated:key-") and len(own) == len("generated:key-") + 12 and secret not in own
    assert bank_key(secret=secrets.token_urlsafe(48)).label != own  # a new secret is a new dataset
    bank_generate(split="test", per_type=1, types=["Dice_Count"], workers=1)
    assert Puzzle.objects.get().dataset == own
