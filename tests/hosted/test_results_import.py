"""`benchmarks import-results`: the peer's own agent output (benchmark_results_*.json, one JSON object a
line as its /api/benchmark_results appends them) read as an agent run, paired by family and the
peer's puzzle id with the drawn puzzles, and set against people in the report."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import AgentRun, Slot, Study
from annotation.reporting.reports import study_report
from puzzles.models import Puzzle
from tests.hosted.rows import answer, enrol, hosted_benchmark, hosted_puzzle

pytestmark = pytest.mark.django_db
R, W = True, False
AGENT = {"model": "gemini-3-pro", "provider": "google", "agent_framework": "browser-use"}


def record(family: str, puzzle_id: str, correct, user_answer, **more) -> str:
    """A line as the peer writes it (the page and its frameworks post `correct`)."""
    return json.dumps(
        {
            "puzzle_type": family,
            "puzzle_id": puzzle_id,
            "correct": correct,
            "user_answer": user_answer,
            "elapsed_time": 41.2,
            **AGENT,
            **more,
        }
    )


@pytest.fixture
def drawn(db):
    hosted_benchmark()
    puzzles = {
        "r1": hosted_puzzle("Red_Dot", "seed=17"),
        "r2": hosted_puzzle("Red_Dot", "seed=42"),
        "p1": hosted_puzzle("Dice_Roll_Path", "index=0"),
        "p2": hosted_puzzle("Dice_Roll_Path", "index=3"),
    }
    hosted_puzzle("Red_Dot", "seed=99", status=Puzzle.Status.FAILED)  # set aside by the draw: never paired
    return puzzles


@pytest.fixture
def results_file(tmp_path):
    lines = [
        record("Red_Dot", "red_dot_seed_17", True, [[120, 88], [40, 301], [512, 77]]),  # 1
        record("Red_Dot", "red_dot_seed_42", True, [[10, 10], [20, 20], [30, 30]]),  # 2
        "{not json",  # 3
        record("Dice_Roll_Path", "dice_roll_path_0000", False, [1, 2]),  # 4
        record("Dice_Roll_Path", "dice_roll_path_0003", False, "NO_SUBMISSION_MAX_STEPS"),  # 5
        record("Red_Dot", "red_dot_seed_99", False, "ERROR_TIMEOUT"),  # 6: set aside here
        json.dumps({"puzzle_type": "Mirror", "correct": True}),  # 7: no puzzle_id
        record("Mirror", "mirror_0001", False, "NAVIGATION_FAILURE"),  # 8: no such family drawn
        record("Red_Dot", "red_dot_seed_17", False, [[1, 1]]),  # 9: a second try at r1
    ]
    path = tmp_path / "benchmark_results_google_gemini-3-pro_20261201_090000.json"
    path.write_text("\n".join(lines) + "\n")
    return path


def import_results(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("benchmarks", "import-results", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_records_on_drawn_puzzles_become_rollouts_and_the_rest_are_counted_and_named(drawn, results_file):
    out, err = import_results("nb", str(results_file))

    assert "line 3 skipped: not JSON" in err and "line 7 skipped: no puzzle_type or puzzle_id" in err
    assert (
        "2 records name no drawn puzzle of nb, not imported: Red_Dot red_dot_seed_99 (line 6), "
        "Mirror mirror_0001 (line 8)"
    ) in err
    run = AgentRun.objects.get()
    assert "import-results: 5 of 7 records on 4 drawn puzzles into run 'nb:gemini-3-pro:" in out
    assert (run.source, run.model, run.protocol, run.dataset) == ("import", "gemini-3-pro", "browser-use", "hosted:nb")
    assert run.settings["provider"] == "google" and run.settings["unknown_puzzles"] == 2
    # k is the fewest records a paired puzzle has (1), so every paired puzzle counts with exactly k.
    assert run.rollouts_per_puzzle == 1
    rollouts = {
        (r.puzzle_id, r.index): (r.status, r.submitted, r.correct, r.reason)
        for r in run.rollouts.order_by("puzzle_id", "index")
    }
    assert rollouts == {
        (drawn["r1"].pk, 0): ("done", True, True, ""),
        (drawn["r1"].pk, 1): ("done", True, False, ""),  # the second try, kept, beyond k
        (drawn["r2"].pk, 0): ("done", True, True, ""),
        (drawn["p1"].pk, 0): ("done", True, False, ""),  # a wrong answer
        (drawn["p2"].pk, 0): ("no_action", False, False, "NO_SUBMISSION_MAX_STEPS"),  # nothing submitted
    }
    assert sorted(run.puzzles) == sorted(p.pk for p in drawn.values())

    # Importing again under the same name replaces the run, not adds to it.
    import_results("nb", str(results_file))
    assert AgentRun.objects.count() == 1 and AgentRun.objects.get().rollouts.count() == 5


def test_the_imported_run_is_paired_with_people_on_the_same_puzzles(drawn, results_file):
    study = Study.objects.create(name="Hosted pilot", split="test", puzzles_per_annotator=4, overlap=3)
    for rank, puzzle in enumerate(drawn.values()):
        Slot.objects.create(study=study, puzzle=puzzle, copy=0, rank=rank)
    (a, _), (b, _), (c, _) = (enrol(study, name) for name in "abc")
    #        r1  r2  p1  p2        the agent: r1 R, r2 R, p1 W, p2 not submitted
    #   a    R   R   R   R
    #   b    R   R   R   R
    #   c    W   W   R   R
    plan = [(a, R, R, R, R), (b, R, R, R, R), (c, W, W, R, R)]
    for i, (who, *outcomes) in enumerate(plan):
        for j, (key, correct) in enumerate(zip(("r1", "r2", "p1", "p2"), outcomes)):
            answer(who, drawn[key], study, correct, after_s=5, at=4 * i + j)
    import_results("nb", str(results_file), "--run", "gemini on nb")

    report = study_report(study=study)
    (agent,) = report["agents"]
    assert (agent["name"], agent["source"], agent["rollouts_per_puzzle"]) == ("gemini on nb", "import", 1)
    assert {row["type"]: row["pass1"] for row in agent["types"]} == {"nb:Dice_Roll_Path": 0.0, "nb:Red_Dot": 1.0}
    (versus,) = report["versus"]
    drp, red = versus["rows"]
    # Red_Dot: people 2/3 on each puzzle, the agent 1: difference -1/3. Dice_Roll_Path: people 1,
    # the agent 0 on both (a wrong answer, and nothing submitted): +1.
    assert (red["people_pass1"], red["agent_pass1"], red["difference"]) == pytest.approx((2 / 3, 1.0, -1 / 3))
    assert (drp["people_pass1"], drp["agent_pass1"], drp["difference"]) == (1.0, 0.0, 1.0)
    assert (drp["people_only"], drp["agent_only"], red["people_only"], red["agent_only"]) == (2, 0, 0, 0)
    # Dice_Roll_Path's interval, exact with 3 people (6 answers, 1/6 each: n = 3): people right and the
    # agent wrong on all, b = 3 of 3, c = 0 of 3, each Clopper-Pearson at 97.5% (Bonferroni):
    # low_b solves p^3 = 1.25%, high_c = 1 - that; the interval is [low_b - high_c, 1 - 0].
    low_b = 0.0125 ** (1 / 3)
    assert (drp["ci_low"], drp["ci_high"]) == pytest.approx((low_b - (1 - low_b), 1.0), abs=1e-6)
    assert drp["ci_method"].endswith("(few participants)") and drp["ci_people"] == pytest.approx(3.0)
    overall = versus["overall"]
    assert (overall["people_pass1"], overall["agent_pass1"], overall["difference"]) == pytest.approx(
        (5 / 6, 0.5, 1 / 3)
    )
    assert versus["unpaired"] == []


def test_a_file_that_does_not_parse_or_mixes_models_is_refused_with_why(drawn, tmp_path):
    garbage = tmp_path / "benchmark_results_x.json"
    garbage.write_text("<html>not results</html>\n")
    with pytest.raises(CommandError, match=r"holds no benchmark result \(line 1: not JSON"):
        import_results("nb", str(garbage))
    missing = tmp_path / "nothing.json"
    with pytest.raises(CommandError, match="cannot read"):
        import_results("nb", str(missing))
    with pytest.raises(CommandError, match="no benchmark named 'other'"):
        import_results("other", str(garbage))

    mixed = tmp_path / "benchmark_results_mixed.json"
    mixed.write_text(
        record("Red_Dot", "red_dot_seed_17", True, [])
        + "\n"
        + record("Red_Dot", "red_dot_seed_42", False, [], model="gpt-5")
        + "\n"
    )
    with pytest.raises(
        CommandError, match=r"mixes models \(gemini-3-pro \(1\), gpt-5 \(1\)\): import each with --model"
    ):
        import_results("nb", str(mixed))
    out, _ = import_results("nb", str(mixed), "--model", "gpt-5")
    assert "1 of 1 records on 1 drawn puzzles" in out
    assert AgentRun.objects.get().rollouts.get().correct is False
    assert AgentRun.objects.count() == 1


def test_a_json_list_and_the_is_correct_spelling_are_read_too(drawn, tmp_path):
    listed = tmp_path / "benchmark_results_list.json"
    listed.write_text(
        json.dumps([{"puzzle_type": "Red_Dot", "puzzle_id": "red_dot_seed_42", "is_correct": True, "model": "m"}])
    )
    out, _ = import_results("nb", str(listed))
    assert "1 of 1 records on 1 drawn puzzles" in out
    assert AgentRun.objects.get().rollouts.get().correct is True
