"""A release round trip in real Chromium: people join a study by invite link with crowd ids and
solve it with their hands, an agent run plays the same puzzles through the live page, and the
release of the study holds both, keeps every crowd id and the flag's note out, and gives the
report's Pass@1 per type."""

import io
import json
import re
import statistics

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from annotation.models import AgentRun, Attempt, Enrollment
from annotation.reporting.reports import study_report
from annotation.studies.setup import study_create
from puzzles.registry import get_type
from tests.agents.conftest import STAND_IN_CLIENT
from tests.agents.fakes import FakeChatServer, reply, text_reply, tool_calls

from .conftest import chromium, run, verified_puzzles
from .test_study import work_through

pytestmark = pytest.mark.browser


def typing_model(puzzle):
    """A model that clicks the answer box, types 7 and submits: one call per request."""
    layout = get_type("Dice_Count").layout(puzzle.public)
    box = [round(v) for v in layout.control("text").center()]
    submit = [round(v) for v in layout.control("submit").center()]
    steps = [("click", {"x": box[0], "y": box[1]}), ("type_text", {"text": "7"}), ("click", dict(zip("xy", submit)))]

    def respond(body):
        done = sum(1 for message in body["messages"] if message["role"] == "tool")
        return reply(tool_calls(steps[done])) if done < len(steps) else text_reply("submitted")

    return respond


def test_a_study_in_chromium_and_an_agent_run_round_trip_through_a_release(site, transactional_db, tmp_path):
    puzzles = verified_puzzles(["Dice_Count"], per_type=2, seed=23)
    study = study_create(name="Browser release", split="test", puzzles_per_annotator=2, overlap=2)

    async def everyone():
        async with chromium() as browser:
            return [await work_through(browser, site, study.token, pid, pid == "p1") for pid in ("p1", "p2")]

    assert run(everyone()) == [study.completion_code] * 2
    crowd_ids = set(Enrollment.objects.filter(study=study).values_list("external_ids__PROLIFIC_PID", flat=True))
    assert crowd_ids == {"p1", "p2"}

    client = tmp_path / "client" / "agent_frameworks" / "computeruse_cli.py"
    client.parent.mkdir(parents=True)
    client.write_text(STAND_IN_CLIENT)
    with FakeChatServer(typing_model(puzzles[0])) as fake:
        call_command(
            "agent", "run", "--protocol", "openai-tools", "--model", "m", "--base-url", fake.url,
            "--captchaarena-client", str(client.parent.parent), "--split", "test", "--dataset", "generated:23",
            "--name", "typist", stdout=io.StringIO(), stderr=io.StringIO(),
        )  # fmt: skip
    rollouts = AgentRun.objects.get(name="typist").rollouts.all()
    assert [(r.status, r.submitted) for r in rollouts] == [("done", True)] * 2

    out = tmp_path / "release"
    call_command("release", "build", "--study", str(study.pk), "--out", str(out), stdout=io.StringIO())
    attempts = pq.read_table(out / "attempts.parquet").to_pylist()
    people = Attempt.objects.filter(study=study, participant__kind="human").order_by("created_at")
    assert len(attempts) == people.count() == 4
    assert sorted((a["puzzle"], a["correct"], a["actions"]) for a in attempts) == sorted(
        (a.puzzle.uid, a.correct, a.action_count) for a in people
    )
    assert all(a["marks"] == "" or "no_input" not in a["marks"] for a in attempts)  # hands, in Chromium
    agents = pq.read_table(out / "agents.parquet").to_pylist()
    assert {a["run"] for a in agents} == {"typist"} and len(agents) == 2
    played = {r.puzzle.uid: r.attempt.action_count for r in rollouts}
    assert {a["puzzle"]: a["agent_actions"] for a in agents} == played
    for row in agents:  # over people's median on the same puzzle, from the same attempts
        mine = [a["actions"] for a in attempts if a["puzzle"] == row["puzzle"] and a["submitted"]]
        assert row["people_actions"] == statistics.median(mine)
        assert row["actions_ratio"] == pytest.approx(played[row["puzzle"]] / statistics.median(mine))

    # The crowd ids (p1, p2, the link's STUDY_ID st1) and the flag's note: in every text file byte
    # for byte, and in the Parquet tables' values (short ids could occur by chance in compressed bytes).
    leaked = re.compile(rb"\b(p1|p2|st1)\b|the dice overlap")
    for path in out.iterdir():
        data = path.read_bytes()
        if path.suffix == ".parquet":
            data = json.dumps(pq.read_table(path).to_pylist(), default=str).encode()
        assert not leaked.search(data), (path.name, leaked.search(data))

    meta = json.loads((out / "release.json").read_text())
    report = study_report(study=study)
    assert [(t["type"], t["pass1"], t["ci_low"], t["ci_high"]) for t in meta["studies"][0]["types"]] == [
        (t["type"], t["pass1"], t["ci_low"], t["ci_high"]) for t in report["types"]
    ]
