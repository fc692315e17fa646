"""Runs leave and enter as the published client's output layout: export, import, round trip."""

import io
import json

import pytest
from django.core.management import call_command
from PIL import Image

from annotation.agents.trajectories import screenshot_path, screenshot_steps
from annotation.models import AgentRun, Rollout
from annotation.reporting.reports import agents_on
from puzzles.models import Puzzle
from puzzles.registry import get_type
from puzzles.services import bank_generate
from tests.agents.conftest import command
from tests.agents.fakes import PAGE_IN_PROMPT, FakeChatServer, text_reply, xml_call

ERROR = (500, {"error": "down"})


def png(colour) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1280, 1080), colour).save(out, format="PNG")
    return out.getvalue()


def staged_model(geometry):
    """Per puzzle and rollout (one worker: rollouts in order): Geometry_Click solved, then only
    looked at; Dice_Count's first rollout fails at the server, its second never acts."""
    x, y = get_type(geometry.type).layout(geometry.public).main.to_stage(*geometry.truth["point"])
    plans = {
        "Geometry_Click": [[xml_call("click", {"x": round(x), "y": round(y)}, "I see a circle.")],
                           [xml_call("screenshot", {}, "Let me look again."), "I am not sure."]],
        "Dice_Count": [[ERROR], ["I cannot tell."]],
    }  # fmt: skip
    seen: dict[str, list[int]] = {}

    def respond(body):
        kind = PAGE_IN_PROMPT.search(body["messages"][0]["content"]).group(1).rsplit("_", 1)[0]
        counters = seen.setdefault(kind, [-1, 0])
        if len(body["messages"]) == 2:  # a rollout's first request
            counters[:] = [counters[0] + 1, 0]
        plan = plans[kind][counters[0]]
        answer = plan[min(counters[1], len(plan) - 1)]
        counters[1] += 1
        return answer if isinstance(answer, tuple) else text_reply(answer)

    return respond


ROLLOUT_FIELDS = ("index", "status", "submitted", "correct", "end", "reason", "steps", "instruction", "system_prompt")
TURN_FIELDS = (
    "number",
    "seen",
    "request",
    "reply",
    "calls",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "retries",
    "error",
)


def snapshot(run: AgentRun) -> list:
    rollouts = run.rollouts.order_by("puzzle_id", "index")
    return [
        (
            r.puzzle_id,
            [getattr(r, f) for f in ROLLOUT_FIELDS],
            [[getattr(t, f) for f in TURN_FIELDS] for t in r.turns.all()],
            [screenshot_path(r.pk, step).read_bytes() for step in screenshot_steps(r.pk)],
        )
        for r in rollouts
    ]


@pytest.mark.browser
def test_export_then_import_gives_the_run_back(puzzles_of, client_checkout, tmp_path):
    dice, geometry = puzzles_of("Dice_Count", "Geometry_Click")
    with FakeChatServer(staged_model(geometry)) as fake:
        out = command(
            "agent", "run", "--protocol", "captchaarena-native", "--model", "org/captcha-agent-9b",
            "--base-url", fake.url, "--captchaarena-client", str(client_checkout), "--split", "test",
            "--rollouts", "2", "--retries", "0", "--workers", "1", "--name", "original",
        )  # fmt: skip
    assert out.strip().endswith("agent: 1/3 correct, 1 failed (left out)"), out
    original = AgentRun.objects.get(name="original")
    export = tmp_path / "export"
    assert command("agent", "export", "original", str(export)).strip() == f"export: 4 rollouts written to {export}"

    root = json.loads((export / "run_summary.json").read_text())
    assert (root["benchmark"], root["agent"], root["mode"]) == ("captchaarena", "captcha-agent-9b", "per_puzzle")
    assert (root["total_puzzles"], root["total_submitted"], root["total_correct"], root["accuracy"]) == (3, 1, 1, 33.33)
    folder = export / "geometry_click_1" / "Geometry_Click_1_00000"
    summary = json.loads((folder / "rollout_1" / "summary.json").read_text())
    assert (summary["puzzle_type"], summary["puzzle_id"], summary["status"]) == ("Geometry_Click_1", "00000", "done")
    assert summary["correct"] and summary["reward"] == 1.0 and summary["total_steps"] == 1
    assert summary["transitions"][0]["action"].startswith('click({"x": ')
    assert summary["transitions"][0]["image"] == "screenshots/screenshot_step_1.png"
    metafile = json.loads((folder / "rollout_2" / "metafile.json").read_text())
    assert [s["result"] for s in metafile["steps"]] == ["screenshot_taken"] and metafile[
        "task_id"
    ] == "Geometry_Click_1_00000"
    sft = json.loads((folder / "rollout_2" / "sft_data.json").read_text())
    assert sft["conversations"][0]["content"].startswith("Stand-in for the trained prompt")
    assert sft["conversations"][1]["content"][0] == {"type": "image", "image": "screenshots/screenshot_step_0.png"}
    failed = export / "dice_count_1" / "Dice_Count_1_00000" / "rollout_1"
    assert (
        not (failed / "summary.json").exists()
        and json.loads((failed / "arena_failed.json").read_text())["arena_status"] == "failed"
    )
    assert (folder / "rollout_1" / "screenshots" / "screenshot_step_1.png").is_file()
    per_type = json.loads((export / "dice_count_1" / "run_summary.json").read_text())
    assert per_type["puzzle_type"] == "Dice_Count_1" and per_type["total_puzzles"] == 1

    out = command("agent", "import", str(export), "--name", "copy")
    assert out.strip() == "import: 2 puzzles matched into run 'copy', 0 unmatched"
    copy = AgentRun.objects.get(name="copy")
    assert snapshot(copy) == snapshot(original)
    assert (copy.source, copy.model, copy.protocol, copy.rollouts_per_puzzle) == (
        "import", "org/captcha-agent-9b", "captchaarena-native", 2
    )  # fmt: skip
    assert copy.settings == original.settings and copy.dataset == original.dataset
    first, second = agents_on({dice.pk, geometry.pk})
    assert {k: v for k, v in first.items() if k not in ("name", "source", "run")} == {
        k: v for k, v in second.items() if k not in ("name", "source", "run")
    }


def published_rollout(folder, *, type_folder, stem, steps, submitted, correct, status, prompt="Click the circle."):
    """One rollout folder exactly as the published client writes it (notes, section 5)."""
    shots = folder / "screenshots"
    shots.mkdir(parents=True)
    for n in range(len(steps) + 1):
        (shots / f"screenshot_step_{n}.png").write_bytes(png((n * 40, 90, 160)))
    meta_steps = [
        {"screenshot_path": f"screenshots/screenshot_step_{n + 1}.png", "reasoning": reasoning, "action": action,
         "result": result}
        for n, (reasoning, action, result) in enumerate(steps)
    ]  # fmt: skip
    reward = 1.0 if submitted and correct else 0.0
    files = {
        "summary.json": {
            "puzzle_type": type_folder, "puzzle_id": stem, "prompt": prompt, "submitted": submitted,
            "correct": correct, "reward": reward, "status": status, "total_steps": len(steps),
            "transitions": [{"step": n, "action": s["action"], "image": s["screenshot_path"],
                             "reasoning": s["reasoning"], "result": s["result"]} for n, s in enumerate(meta_steps)],
        },
        "metafile.json": {
            "benchmark": "captchaarena", "agent": "CaptchaAgent-9B", "task_id": f"{type_folder}_{stem}",
            "summary_info": {"cum_reward": reward}, "goal": prompt, "steps": meta_steps,
        },
        "sft_data.json": {
            "id": f"{type_folder}_{stem}", "puzzle_type": type_folder, "puzzle_prompt": prompt, "reward": reward,
            "correct": correct, "conversations": [{"role": "system", "content": "the trained prompt"}],
        },
    }  # fmt: skip
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data, ensure_ascii=False, indent=2))
    (folder / "trajectory.jsonl").write_text(json.dumps({"run_id": f"{type_folder}_{stem}", "event_type": "run_start"}))
    (folder / "summary.md").write_text(f"# {type_folder} / {stem}\n")


@pytest.mark.django_db
def test_the_published_clients_output_imports_and_matches_on_type_and_id(tmp_path):
    bank_generate(split="test", per_type=2, types=["Geometry_Click", "Bingo"], bank_seed=5, workers=1)
    geometry = Puzzle.objects.get(type="Geometry_Click", source_id="00001")
    bingo = Puzzle.objects.get(type="Bingo", source_id="00000")
    root = tmp_path / "runs" / "analyzed"
    # The client's layout: <type folder lower>/<type folder>_<id stem>/[rollout_<n>/]; the type
    # folder carries the published dataset's count (200 here), which our bank does not share.
    place = root / "geometry_click_200" / "Geometry_Click_200_00001"
    published_rollout(place / "rollout_1", type_folder="Geometry_Click_200", stem="00001", submitted=True,
                      correct=True, status="done",
                      steps=[("I see it.\n</think>\n<tool_call>\n<function=click>...", 'click({"x": 402, "y": 377})',
                              "clicked (402, 377) button=left")])  # fmt: skip
    published_rollout(place / "rollout_2", type_folder="Geometry_Click_200", stem="00001", submitted=False,
                      correct=False, status="submit_not_clicked", steps=[])  # fmt: skip
    published_rollout(root / "bingo_200" / "Bingo_200_00000", type_folder="Bingo_200", stem="00000",
                      submitted=True, correct=False, status="done",
                      steps=[("swap", 'click({"x": 500, "y": 400})', "clicked (500, 400) button=left"),
                             ("swap", 'click({"x": 700, "y": 400})', "clicked (700, 400) button=left")])  # fmt: skip
    published_rollout(root / "bingo_200" / "Bingo_200_bingo99", type_folder="Bingo_200", stem="bingo99",
                      submitted=True, correct=True, status="done", steps=[])  # fmt: skip
    (root / "run_summary.json").write_text(json.dumps({"benchmark": "captchaarena", "total_puzzles": 4}))
    (root / "bingo_200" / "run_summary.json").write_text(json.dumps({"puzzle_type": "Bingo_200"}))

    out, err = io.StringIO(), io.StringIO()
    call_command("agent", "import", str(root), "--name", "CaptchaAgent (published)", stdout=out, stderr=err)
    assert out.getvalue().strip() == "import: 2 puzzles matched into run 'CaptchaAgent (published)', 1 unmatched"
    assert "no stored puzzle for Bingo_200/bingo99" in err.getvalue() and "skipped" not in err.getvalue()
    run = AgentRun.objects.get(name="CaptchaAgent (published)")
    assert (run.source, run.model, run.rollouts_per_puzzle, run.dataset) == (
        "import",
        "CaptchaAgent-9B",
        2,
        "generated:5",
    )
    rollouts = {(r.puzzle_id, r.index): r for r in run.rollouts.all()}
    assert set(rollouts) == {(geometry.pk, 0), (geometry.pk, 1), (bingo.pk, 0)}
    solved, silent, wrong = rollouts[(geometry.pk, 0)], rollouts[(geometry.pk, 1)], rollouts[(bingo.pk, 0)]
    assert (solved.status, solved.correct, solved.steps, solved.system_prompt) == (
        "done",
        True,
        1,
        "the trained prompt",
    )
    assert (silent.status, silent.submitted, silent.end) == ("no_action", False, "submit_not_clicked")
    assert (wrong.status, wrong.submitted, wrong.correct, wrong.turns.count()) == ("done", True, False, 2)
    (turn,) = solved.turns.all()
    assert turn.calls[0]["name"] == "click" and turn.calls[0]["arguments"] == {"x": 402, "y": 377}
    assert turn.calls[0]["screenshot"] == 1 and turn.reply["content"].startswith("I see it.")
    assert screenshot_steps(solved.pk) == [0, 1]
    (agent,) = agents_on({geometry.pk, bingo.pk})
    assert agent["rollouts_per_puzzle"] == 2 and agent["short_puzzles"] == 1  # Bingo has one rollout of two
    assert agent["pass_at"] == {"1": 0.5}


@pytest.mark.django_db
def test_an_import_never_reuses_a_harness_runs_name(tmp_path):
    AgentRun.objects.create(name="mine", source=AgentRun.Source.HARNESS)
    out = command("agent", "import", str(tmp_path), "--name", "mine")
    assert "0 puzzles matched" in out and AgentRun.objects.get(name="mine").source == "harness"
    assert not Rollout.objects.exists()
