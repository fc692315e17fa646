"""Generated puzzles read and measure as the published ones: the instruction the published page
writes, the natural image size its layout is measured on (tests/e2e/published_page_boxes.json)."""

import json
from pathlib import Path

import numpy as np
import pytest

from puzzles.registry import get_type

BOXES = json.loads((Path(__file__).parents[1] / "e2e" / "published_page_boxes.json").read_text())
SEEDS = range(24)


@pytest.mark.parametrize("type_name", ["Patch_Select", "Select_Animal"])
def test_the_instruction_is_the_one_the_published_page_writes(type_name):
    kind = get_type(type_name)
    for seed in SEEDS:
        generated = kind.generate(np.random.default_rng(seed))
        target = generated.truth["target_object"]
        # script.js: `Select all squares with ${target_object}` / `Pick a ${target_object}`
        written = {"Patch_Select": f"Select all squares with {target}", "Select_Animal": f"Pick a {target}"}
        assert generated.public["instruction"] == written[type_name], seed
        assert kind.published_instruction({"target_object": target}) == written[type_name]


def test_path_finder_images_have_the_published_natural_size():
    natural = {tuple(image["natural"]) for image in BOXES["Path_Finder"]["images"]}
    assert natural == {(540, 360)}
    kind = get_type("Path_Finder")
    for seed in SEEDS:
        generated = kind.generate(np.random.default_rng(seed))
        assert {image.size for image in generated.images.values()} == natural, seed
        assert tuple(generated.public["image_size"]) == tuple(generated.public["reference_size"]) == (540, 360)
