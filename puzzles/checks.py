"""Read-only checks over generated puzzles: selfcheck and the mask-versus-box report."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from puzzles.bank import BankKey, generate_puzzle
from puzzles.registry import get_type


def check_puzzle(type_name: str, index: int, bank: BankKey | int | None, split: str = "test") -> list[str]:
    """Problems with one puzzle: its truth must verify correct (reward 1), perturbations wrong (reward < 1)."""
    puzzle_type = get_type(type_name)
    generated = generate_puzzle(type_name, split, index, bank)
    truth = json.loads(json.dumps(generated.truth))  # verify what would be stored, not live objects
    problems = []
    verdict = puzzle_type.verify(truth, puzzle_type.solution(truth), generated.masks)
    if not (verdict.correct and verdict.reward == 1.0):
        problems.append(f"#{index}: the truth's own answer verified {verdict.as_dict()}")
    wrong_answers = puzzle_type.perturbations(truth, generated.masks, np.random.default_rng(index))
    if not wrong_answers:
        problems.append(f"#{index}: no perturbed answers to check")
    for answer in wrong_answers:
        verdict = puzzle_type.verify(truth, answer, generated.masks)
        if verdict.correct or not 0.0 < verdict.reward < 1.0:
            problems.append(f"#{index}: perturbed answer {answer!r} verified {verdict.as_dict()}")
    return problems


def check_job(job: tuple[str, int, BankKey]) -> tuple[str, list[str]]:
    """check_puzzle for a worker pool: a crash is a finding, not the end of the run."""
    type_name, index, bank = job
    try:
        return type_name, check_puzzle(type_name, index, bank)
    except Exception as error:
        return type_name, [f"#{index}: {type(error).__name__}: {error}"]


@dataclass
class MaskStats:
    type: str
    puzzles: int = 0
    mask_share: float = 0.0  # mean share of the image the (dilated) mask covers
    box_share: float = 0.0  # mean share the mask's bounding box covers
    disagreement: float = 0.0  # mean share of uniform random clicks a box accepts and the mask rejects

    def add(self, mask: np.ndarray) -> None:
        ys, xs = np.nonzero(mask)
        box = np.zeros_like(mask)
        box[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] = True
        total = mask.size
        self.puzzles += 1
        # Running means; exact areas stand in for the limit of infinitely many uniform clicks.
        self.mask_share += (mask.sum() / total - self.mask_share) / self.puzzles
        self.box_share += (box.sum() / total - self.box_share) / self.puzzles
        self.disagreement += ((box & ~mask).sum() / total - self.disagreement) / self.puzzles
