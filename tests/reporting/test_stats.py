"""Pure statistics and the agent-output reader: no database, numbers computed by hand."""

import json
from math import comb

import numpy as np
import pytest

from annotation.agents.outputs import AgentOutputs, read_agent_outputs
from annotation.reporting.stats import (
    ClusterBootstrap,
    fleiss_kappa,
    fleiss_kappa_binary,
    gwet_ac1,
    krippendorff_alpha_nominal,
    mean_pass_at_k,
    median_iqr,
    pass_at_k,
    percent_agreement,
    weighted_percentile_interval,
    wilson_interval,
)

approx = pytest.approx


# --- Wilson ----------------------------------------------------------------------------------
# centre = (p + z²/2n) / (1 + z²/n), half = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²), z² = 3.8415


def test_wilson_interval_matches_hand_computed_values():
    # 8/10: centre = 0.99207/1.38415 = 0.71674, half = 1.41603 * sqrt(0.0256037) = 0.22658
    assert wilson_interval(8, 10) == approx((0.4902, 0.9433), abs=1e-4)
    # 50/100: centre 0.5, half = 1.88749 * sqrt(0.0025 + 0.000096) = 0.09617
    assert wilson_interval(50, 100) == approx((0.4038, 0.5962), abs=1e-4)


def test_wilson_interval_at_the_edges():
    # 0/10: the lower end is exactly 0; upper = 2 * 0.13877 = 0.27753; 10/10 mirrors it
    assert wilson_interval(0, 10) == approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_interval_narrows_with_a_smaller_z_and_refuses_nonsense():
    low, high = wilson_interval(8, 10, z=1.0)
    assert 0.4902 < low < 0.8 < high < 0.9433
    for successes, n in [(11, 10), (-1, 10), (0, -1)]:
        with pytest.raises(ValueError):
            wilson_interval(successes, n)


# --- pass@k ----------------------------------------------------------------------------------


def test_pass_at_k_matches_hand_computations():
    assert pass_at_k(5, 1, 1) == approx(0.2)  # c/n
    assert pass_at_k(5, 1, 5) == 1.0  # n - c = 4 < k: every draw of 5 holds the correct one
    assert pass_at_k(5, 2, 2) == approx(0.7)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(10, 3, 5) == approx(1 - 21 / 252)  # 1 - C(7,5)/C(10,5)
    assert pass_at_k(10, 0, 3) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0


def test_pass_at_k_agrees_with_the_binomial_form():
    for n, c, k in [(20, 4, 3), (50, 7, 10), (13, 12, 1), (30, 1, 29)]:
        assert pass_at_k(n, c, k) == approx(1 - comb(n - c, k) / comb(n, k))


def test_pass_at_k_refuses_impossible_counts():
    for n, c, k in [(5, 1, 6), (5, 1, 0), (5, 6, 1), (5, -1, 1)]:
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)


def test_mean_pass_at_k_averages_puzzles_and_needs_k_samples_each():
    assert mean_pass_at_k([(5, 1), (5, 5), (5, 0)], 1) == approx((0.2 + 1 + 0) / 3)
    assert mean_pass_at_k([(5, 2), (10, 3)], 2) == approx((0.7 + (1 - comb(7, 2) / comb(10, 2))) / 2)
    with pytest.raises(ValueError, match="2 of 3 puzzles have fewer than k=5"):
        mean_pass_at_k([(5, 1), (4, 1), (1, 0)], 5)
    with pytest.raises(ValueError):
        mean_pass_at_k([], 1)


# --- Fleiss' kappa ---------------------------------------------------------------------------

FLEISS_1971 = [  # Wikipedia's worked example: 10 subjects, 14 raters, 5 categories
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_on_the_classic_example():
    # P-bar = 0.378, P_e = 0.213, kappa = (0.378 - 0.213) / (1 - 0.213) = 0.210
    assert fleiss_kappa(FLEISS_1971) == approx(0.210, abs=5e-4)


def test_fleiss_kappa_simple_cases():
    assert fleiss_kappa([[3, 0], [0, 3]]) == approx(1.0)  # perfect agreement, both categories
    assert fleiss_kappa([[0, 3], [0, 3]]) is None  # one category: P_e = 1
    assert fleiss_kappa([]) is None
    # [[0,2],[2,0],[1,1]]: P_i = 1, 1, 0 -> P-bar 2/3; p = (1/2, 1/2) -> P_e 1/2; kappa 1/3
    assert fleiss_kappa([[0, 2], [2, 0], [1, 1]]) == approx(1 / 3)
    # [[1,1],[1,1]]: P-bar 0, P_e 1/2 -> kappa -1
    assert fleiss_kappa([[1, 1], [1, 1]]) == approx(-1.0)


def test_fleiss_kappa_refuses_uneven_or_single_raters():
    for bad in [[[1, 1], [2, 1]], [[1, 0], [0, 1]], [[2, 0], [1]], [[3, -1]]]:
        with pytest.raises(ValueError):
            fleiss_kappa(bad)


def test_fleiss_kappa_binary_uses_the_most_common_number_of_raters():
    T, F = True, False
    # puzzles with 2 ratings: [T,T], [F,F], [T,F] -> kappa 1/3 as above; [T,T,F] and [T] left out
    assert fleiss_kappa_binary([[T, T], [F, F], [T, F], [T, T, F], [T]]) == (approx(1 / 3), 3)
    # a tie (one puzzle of 2, one of 3) goes to 3: [[2 wrong, 1 right]]:
    # P-bar = (4 + 1 - 3)/6 = 1/3, P_e = 4/9 + 1/9 = 5/9 -> kappa = (1/3 - 5/9)/(4/9) = -1/2
    assert fleiss_kappa_binary([[T, T], [T, F, F]]) == (approx(-0.5), 1)
    assert fleiss_kappa_binary([[T, T], [T, T]]) == (None, 2)
    assert fleiss_kappa_binary([[T], []]) == (None, 0)
    assert fleiss_kappa_binary([]) == (None, 0)


# --- Krippendorff's alpha --------------------------------------------------------------------


def test_krippendorff_alpha_on_the_reference_nominal_data():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units,
    # missing values dropped; nominal alpha = 0.743 (exactly 113/152)
    units = [
        [1, 1, 1],
        [2, 2, 3, 2],
        [3, 3, 3, 3],
        [3, 3, 3, 3],
        [2, 2, 2, 2],
        [1, 2, 3, 4],
        [4, 4, 4, 4],
        [1, 1, 2, 1],
        [2, 2, 2, 2],
        [5, 5, 5],
        [1, 1],
        [3],
    ]
    assert krippendorff_alpha_nominal(units) == approx(113 / 152)
    assert round(krippendorff_alpha_nominal(units), 3) == 0.743


def test_krippendorff_alpha_by_hand_and_at_the_edges():
    # [0,0], [1,1], [0,1]: n = 6, agreeing pairs sum(o_cc) = 2 + 2 + 0 = 4, n_0 = n_1 = 3
    # alpha = ((n-1)*4 - sum n_c(n_c-1)) / (n(n-1) - sum n_c(n_c-1)) = (20 - 12)/(30 - 12) = 4/9
    assert krippendorff_alpha_nominal([[0, 0], [1, 1], [0, 1]]) == approx(4 / 9)
    assert krippendorff_alpha_nominal([[0, 0], [1, 1, 1], [0, 0, 0, 0], [7]]) == approx(1.0)
    assert krippendorff_alpha_nominal([[1, 1], [1, 1, 1]]) is None  # one value: no expected disagreement
    assert krippendorff_alpha_nominal([[1], [0], []]) is None  # nothing pairable
    assert krippendorff_alpha_nominal([]) is None


def test_krippendorff_alpha_is_close_to_fleiss_kappa_with_equal_raters():
    # with m raters on every unit: alpha = kappa + (1 - kappa)/(N*m) for nominal data
    units = [[0, 1], [0, 0], [1, 1]]
    kappa = fleiss_kappa([[1, 1], [2, 0], [0, 2]])
    assert krippendorff_alpha_nominal(units) == approx(kappa + (1 - kappa) / 6)


# --- percent agreement and Gwet's AC1 ----------------------------------------------------------


def test_the_kappa_paradox_of_the_issue_by_hand():
    # 14 puzzles, two people each, 13 puzzles both right, one split: 27 of 28 ratings right.
    units = [[1, 1]] * 13 + [[1, 0]]
    # Percent agreement: 13 of 14 pairs agree = 13/14 = 0.9286.
    assert percent_agreement(units) == approx(13 / 14)
    # Fleiss: pe = (27/28)^2 + (1/28)^2 = 730/784; kappa = (728/784 - 730/784) / (54/784) = -2/54 = -0.037.
    assert fleiss_kappa_binary([[bool(v) for v in u] for u in units]) == (approx(-1 / 27), 14)
    # Krippendorff: n = 28, agree = 13 * 2 = 26, by chance = 27*26 = 702: (27*26 - 702) / (756 - 702) = 0.
    assert krippendorff_alpha_nominal(units) == approx(0.0)
    # AC1: pi_right = 27/28, pe = 2 * (27/28)(1/28) = 54/784; (728 - 54) / (784 - 54) = 674/730 = 0.9233.
    assert gwet_ac1(units, (0, 1)) == approx(337 / 365)


def test_ac1_and_percent_agreement_with_three_raters_by_hand():
    # Rows: puzzles; values: three people right (1) or not (0).
    units = [[1, 1, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]]
    # Agreeing pairs of 3: 3/3, then 1/3 three times: pa = (1 + 1/3 + 1/3 + 1/3) / 4 = 1/2.
    assert percent_agreement(units) == approx(0.5)
    # pi_1 = (1 + 2/3 + 2/3 + 1/3) / 4 = 2/3; pe = 2 * 2/3 * 1/3 = 4/9; AC1 = (1/2 - 4/9) / (5/9) = 1/10.
    assert gwet_ac1(units, (0, 1)) == approx(0.1)
    # Everyone right everywhere: pe = 0, AC1 = 1 where kappa and alpha are undefined.
    assert gwet_ac1([[1, 1], [1, 1, 1]], (0, 1)) == approx(1.0)
    assert krippendorff_alpha_nominal([[1, 1], [1, 1, 1]]) is None
    # Units with one rating are left out; nothing pairable: None.
    assert percent_agreement([[1, 0], [1]]) == approx(0.0) and gwet_ac1([[1], []], (0, 1)) is None
    assert percent_agreement([]) is None
    with pytest.raises(ValueError):
        gwet_ac1([[1, 2]], (0, 1))


# --- the cluster bootstrap ---------------------------------------------------------------------

# 3 annotators x 2 types x 2 puzzles each (trials 2 per cell). Correct: A 2,2; B 2,1; C 1,0.
TRIALS = [[2, 2], [2, 2], [2, 2]]
SOLVED = [[2, 2], [2, 1], [1, 0]]


def test_three_annotators_are_resampled_exactly_by_hand():
    boot = ClusterBootstrap(TRIALS)
    # C(5, 3) = 10 distinct resamples (multisets of 3 from 3), weighted 1, 3 or 6 in 27.
    assert boot.exact and boot.resamples == 10
    assert sorted(round(w * 27) for w in boot.weights) == [1, 1, 1, 3, 3, 3, 3, 3, 3, 6]
    got = boot.intervals(SOLVED)
    # Equal trials, so a resample's rate is the mean of its drawn annotators' rates. Each extreme
    # (all A, all C) has weight 1/27 = 3.7% > 2.5%, so the 95% interval runs from the lowest
    # annotator to the highest: type 1 rates 1, 1, 1/2 -> [1/2, 1]; type 2 rates 1, 1/2, 0 -> [0, 1].
    assert got.columns == [approx((0.5, 1.0)), approx((0.0, 1.0))]
    # Per annotator, the mean over types: A 1, B 3/4, C 1/4 -> [1/4, 1]; pooled the same here.
    assert got.mean == approx((0.25, 1.0)) and got.pooled == approx((0.25, 1.0))


def test_a_fifty_percent_interval_of_the_mean_over_types_by_hand():
    # The mean of 3 draws from {A 1, B 3/4, C 1/4}, each multiset with its weight in 27:
    #   CCC 1/4 (1) | BCC 5/12 (3) | ACC 1/2 (3) | BBC 7/12 (3) | ABC 2/3 (6)
    #   AAC 3/4 (3) | BBB 3/4 (1)  | ABB 5/6 (3) | AAB 11/12 (3) | AAA 1 (1)
    # cumulative: 1/4:1, 5/12:4, 1/2:7, 7/12:10, 2/3:16, 3/4:20, 5/6:23, 11/12:26, 1:27.
    # 25%: first to reach 6.75/27 -> 1/2; 75%: first to reach 20.25/27 -> 5/6.
    got = ClusterBootstrap(TRIALS, level=0.5).intervals(SOLVED)
    assert got.mean == approx((0.5, 5 / 6))
    # Type 2 alone, rates {1, 1/2, 0}: the same table over 1/2-steps: 25% -> 1/3, 75% -> 2/3.
    assert got.columns[1] == approx((1 / 3, 2 / 3))


def test_the_ratio_weighs_annotators_by_their_answers():
    # A answered 4 (all right), B 1 (wrong). Resamples AA 1/4, AB 1/2, BB 1/4 give 1, 4/5 (not the
    # mean of the rates, 1/2), 0; cumulative 0: 1/4, 4/5: 3/4, 1: 1. 25% -> 0, 75% -> 4/5.
    got = ClusterBootstrap([[4], [1]], level=0.5).intervals([[4], [0]])
    assert got.pooled == approx((0.0, 0.8))
    assert ClusterBootstrap([[4], [1]]).intervals([[4], [0]]).columns == [approx((0.0, 1.0))]


def test_no_interval_from_fewer_than_two_annotators():
    assert ClusterBootstrap([[5, 0]]).intervals([[3, 0]]).columns == [(None, None), (None, None)]
    one_type = ClusterBootstrap([[5, 0], [3, 0]]).intervals([[3, 0], [1, 0]])
    assert one_type.columns[1] == (None, None) and one_type.columns[0] != (None, None)
    empty = ClusterBootstrap(np.zeros((0, 2))).intervals(np.zeros((0, 2)))
    assert empty.pooled == (None, None) and empty.columns == [(None, None)] * 2


def test_many_annotators_are_drawn_with_a_fixed_seed_and_match_the_normal_theory():
    # 40 annotators, 10 answers each in one type, rates 0.3 ... 0.975: balanced, so the bootstrap
    # standard error of the mean is sd/sqrt(40) (population sd), and the 95% percentile interval
    # is close to mean +- 1.96 of it.
    rates = [0.3 + 0.0173 * i for i in range(40)]
    trials = [[10] for _ in rates]
    solved = [[round(10 * r)] for r in rates]
    boot = ClusterBootstrap(trials)
    assert not boot.exact and boot.resamples == 2000
    got = boot.intervals(solved)
    assert got == ClusterBootstrap(trials).intervals(solved)  # seeded: the same, run after run
    values = np.array(solved).ravel() / 10
    half = 1.959964 * values.std() / np.sqrt(40)
    assert got.pooled[0] == approx(values.mean() - half, abs=0.2 * half)
    assert got.pooled[1] == approx(values.mean() + half, abs=0.2 * half)
    # Wider than Wilson's, which takes the 400 answers as independent: they are not.
    wilson = wilson_interval(int(np.array(solved).sum()), 400)
    assert got.pooled[1] - got.pooled[0] > 1.3 * (wilson[1] - wilson[0])


def test_weighted_percentiles_use_the_inverted_cdf():
    assert weighted_percentile_interval([3, 1, 2, 4], [1, 1, 1, 1], level=0.5) == (1.0, 3.0)
    assert weighted_percentile_interval([0, 1], [0.975, 0.025]) == (0.0, 0.0)
    with pytest.raises(ValueError):
        weighted_percentile_interval([], [])


# --- median and quartiles --------------------------------------------------------------------


def test_median_iqr_interpolates_like_numpy():
    # [1,2,3,4]: positions 0.75*... -> q1 = 1 + 0.75 = 1.75, median 2.5, q3 = 3 + 0.25 = 3.25
    assert median_iqr([4.0, 1.0, 3.0, 2.0]) == approx((2.5, 1.75, 3.25))
    # [10, 20, 40]: q1 at position 0.5 -> 15, median 20, q3 at 1.5 -> 30
    assert median_iqr([10, 20, 40]) == approx((20.0, 15.0, 30.0))
    assert median_iqr([5.0]) == (5.0, 5.0, 5.0)
    assert median_iqr([]) == (None, None, None)
    assert all(type(x) is float for x in median_iqr([1, 2]))


# --- the agent's output folders --------------------------------------------------------------


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def test_reads_both_folder_shapes_flat_files_and_scores_pass_at_k(tmp_path):
    T, F = True, False
    run = tmp_path / "run-2025"
    for n, correct in enumerate([T, F, F, F, F]):  # rollout folders, written out of order below
        write(
            run / "Dice_Count_3" / f"rollout_{n}" / "summary.json",
            {"correct": correct, "type": "Dice_Count", "model": "m1"},
        )
    for n, reward in enumerate([1.0, 1, 2.5, 1.0, 1.0]):  # reward >= 1.0 is correct
        write(run / "Mirror_0" / f"rollout_{n}" / "summary.json", {"reward": reward, "captcha_type": "Mirror"})
    for n in range(5):  # a failing puzzle, its outcomes under other keys
        key = ["success", "is_correct", "passed", "score", "score"][n]
        write(run / "Squiggle_9" / f"rollout_{n}" / "summary.json", {key: 0.99 if key == "score" else F})
    write(run / "Dice_Count_3" / "rollout_0" / "trajectory.json", {"steps": []})  # an artifact: skipped
    write(run / "Red_Dot_1" / "summary.json", {"is_correct": T, "puzzle_type": "Red_Dot"})  # single rollout
    write(run / "Red_Dot_1" / "config.json", {"whatever": 1})  # an artifact: skipped
    write(tmp_path / "flat" / "Deformation_2.json", {"passed": F, "model": "m1"})  # flat <id>.json
    write(tmp_path / "flat" / "rollout_3" / "Deformation_2.json", {"score": 1.0})  # flat, rollout 3
    write(run / "Broken_5" / "summary.json", "{not json")
    write(run / "Silent_6" / "summary.json", {"correct": None, "model": "m1", "note": "gave up"})
    write(run / "Odd_7" / "summary.json", {"correct": "yes"})
    write(tmp_path / "summary.json", {"correct": T})  # no puzzle folder above it

    out = read_agent_outputs(tmp_path)

    assert out.rollouts == {
        "Deformation_2": [F, T],
        "Dice_Count_3": [T, F, F, F, F],
        "Mirror_0": [T, T, T, T, T],
        "Red_Dot_1": [T],
        "Squiggle_9": [F, F, F, F, F],
    }
    assert out.types == {"Dice_Count_3": "Dice_Count", "Mirror_0": "Mirror", "Red_Dot_1": "Red_Dot"}
    assert out.model == "m1"
    reasons = {path.split(str(tmp_path))[1]: reason for path, reason in out.problems}
    assert set(reasons) == {
        "/run-2025/Broken_5/summary.json",
        "/run-2025/Silent_6/summary.json",
        "/run-2025/Odd_7/summary.json",
        "/summary.json",
    }
    assert reasons["/run-2025/Broken_5/summary.json"].startswith("unreadable")
    assert reasons["/run-2025/Silent_6/summary.json"].startswith("no outcome")
    assert reasons["/run-2025/Odd_7/summary.json"] == "correct is not true or false"
    assert reasons["/summary.json"] == "no puzzle folder above it"

    five = [(len(v), sum(v)) for k, v in out.rollouts.items() if len(v) == 5]
    # [T,F,F,F,F], [T,T,T,T,T], [F,F,F,F,F]: pass@1 = (1/5 + 1 + 0)/3, pass@5 = (1 + 1 + 0)/3
    assert mean_pass_at_k(five, 1) == approx((0.2 + 1 + 0) / 3)
    assert mean_pass_at_k(five, 5) == approx((1 + 1 + 0) / 3)
    with pytest.raises(ValueError, match="2 of 5 puzzles"):  # Red_Dot_1 and Deformation_2
        mean_pass_at_k([(len(v), sum(v)) for v in out.rollouts.values()], 5)


def test_rollouts_are_ordered_by_number_not_by_name(tmp_path):
    for n, correct in [(10, True), (2, False), (0, True), (1, False)]:
        write(tmp_path / "p" / f"rollout_{n}" / "summary.json", {"correct": correct})
    assert read_agent_outputs(tmp_path).rollouts == {"p": [True, False, False, True]}


def test_duplicates_and_mixed_models_are_problems(tmp_path):
    write(tmp_path / "a" / "p1" / "summary.json", {"correct": True, "model": "m1"})
    write(tmp_path / "b" / "p1" / "summary.json", {"correct": False, "model": "m2"})  # same rollout 0
    write(tmp_path / "b" / "p2" / "summary.json", {"correct": False, "model": "m2"})
    out = read_agent_outputs(tmp_path)
    assert out.rollouts == {"p1": [True], "p2": [False]}  # the first in path order is kept
    assert out.model is None
    assert [reason.split(" was")[0] for _, reason in out.problems] == ["rollout 0 of p1", "several models: m1, m2"]


def test_an_empty_or_missing_folder(tmp_path):
    assert read_agent_outputs(tmp_path) == AgentOutputs({}, {}, None, [])
    out = read_agent_outputs(tmp_path / "nowhere")
    assert out.rollouts == {} and out.problems == [(str(tmp_path / "nowhere"), "not a folder")]
