"""Generated puzzles read and measure as the published ones: the instruction the published page
writes, the natural image size its layout is measured on (tests/e2e/published_page_boxes.json)."""

import numpy as np
import pytest

from puzzles.registry import get_type

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
