"""`benchmarks add | list | draw` against the stand-in server (tests/hosted/standin.py)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.hosted.client import PeerClient
from annotation.hosted.dialects import NEXTGEN, Address
from annotation.models import Benchmark, BenchmarkFamily
from puzzles.models import Puzzle
from tests.hosted import standin as data
from tests.hosted.conftest import GENEROUS_TIMEOUT_MS, start_standin

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("benchmarks", *args, stdout=out)
    return out.getvalue()


def families(name: str) -> dict[str, BenchmarkFamily]:
    return {row.family: row for row in BenchmarkFamily.objects.filter(benchmark__name=name)}


def test_add_probes_each_listed_family_and_sets_aside_what_cannot_be_served(standin):
    run("add", "standin", "--url", standin.url)
    found = families("standin")
    assert set(found) == set(data.FAMILIES)
    served = {name for name, row in found.items() if row.status == BenchmarkFamily.Status.SERVED}
    assert served == {"Dice_Roll_Path", "Spooky_Size", "Red_Dot", "Static_Jigsaw"}
    assert found["Mirror"].status == BenchmarkFamily.Status.SET_ASIDE
    assert "No puzzles found for type: Mirror" in found["Mirror"].reason
    assert (found["Dice_Roll_Path"].address, found["Dice_Roll_Path"].size) == ("index", 3)
    assert (found["Red_Dot"].address, found["Red_Dot"].multi_step, found["Red_Dot"].stateful) == ("seed", True, True)
    assert found["Spooky_Size"].stateful and not found["Spooky_Size"].multi_step
    # The jigsaw passes through the API; what is known of its page waits for the page check.
    assert found["Static_Jigsaw"].page_check == BenchmarkFamily.PageCheck.PENDING
    assert "shuffled_order" in found["Static_Jigsaw"].page_note


def test_add_records_whether_its_stored_puzzles_are_the_papers_published_set(standin):
    run("add", "made-here", "--url", standin.url)
    run("add", "paper", "--url", standin.url, "--published-set")
    assert dict(Benchmark.objects.values_list("name", "published_set")) == {"made-here": False, "paper": True}


def test_list_prints_each_family_with_its_status(standin):
    run("add", "standin", "--url", standin.url)
    listed = run("list")
    assert "standin" in listed and "4 of 5 families served" in listed
    lines = {line.split()[0]: line for line in listed.splitlines()[1:]}
    assert "set aside: " in lines["Mirror"] and "No puzzles found" in lines["Mirror"]
    assert "served (by seed, stateful, multi-step)" in lines["Red_Dot"]
    assert "served (by index, 3 stored)" in lines["Dice_Roll_Path"]
    assert "page check pending (its page numbers pieces by shuffled_order" in lines["Static_Jigsaw"]


def test_add_refuses_a_server_that_does_not_answer():
    gone = start_standin()
    gone.process.terminate()
    gone.process.wait(timeout=30)
    with pytest.raises(CommandError, match="does not answer as Next-Gen CAPTCHAs: no answer from"):
        run("add", "gone", "--url", gone.url)
    assert not Benchmark.objects.exists()


def test_add_refuses_an_unknown_dialect_a_taken_name_and_a_bad_name(standin):
    with pytest.raises(CommandError, match="unknown dialect 'hll'; known: captchaarena, nextgen, opencaptchaworld"):
        run("add", "standin", "--url", standin.url, "--dialect", "hll")
    run("add", "standin", "--url", standin.url)
    with pytest.raises(CommandError, match="the name 'standin' is taken"):
        run("add", "standin", "--url", standin.url)
    with pytest.raises(CommandError, match="benchmark name 'Next Gen'"):
        run("add", "Next Gen", "--url", standin.url)
    with pytest.raises(CommandError, match="give the server's base URL"):
        run("add", "other", "--url", "localhost:7860")
    assert list(Benchmark.objects.values_list("name", flat=True)) == ["standin"]


def test_add_refuses_a_server_of_another_dialect(standin):
    with pytest.raises(CommandError, match=r"its family listing \(/api/list_puzzles\): HTTP 404"):
        run("add", "arena", "--url", standin.url, "--dialect", "captchaarena")


def test_draw_records_each_puzzle_by_the_peers_address_as_a_dataset(standin):
    run("add", "standin", "--url", standin.url)
    said = run("draw", "standin", "--per-type", "2", "--seed", "3")
    assert "8 puzzles drawn into dataset hosted:standin (test, seed 3)" in said
    drawn = list(Puzzle.objects.filter(dataset="hosted:standin"))
    assert sorted({p.type for p in drawn}) == [f"standin:{f}" for f in sorted(data.FAMILIES) if f != "Mirror"]
    for puzzle in drawn:
        puzzle.full_clean()  # a hosted type is a valid Puzzle.type
        hosted = puzzle.public["hosted"]
        assert (puzzle.status, puzzle.split) == (Puzzle.Status.DRAFT, "test")
        assert puzzle.type == f"standin:{hosted['family']}"
        assert puzzle.source_id in (f"seed={puzzle.index}", f"index={puzzle.index}")
        assert hosted["page"].startswith(f"/?type={hosted['family']}&")
    assert all(p.source_id.startswith("seed=") for p in drawn if p.type in ("standin:Red_Dot", "standin:Static_Jigsaw"))


def test_the_drawn_truth_is_the_peers_and_the_peer_accepts_it(standin):
    run("add", "standin", "--url", standin.url)
    run("draw", "standin", "--per-type", "2", "--seed", "3")
    client = PeerClient(standin.url, NEXTGEN)
    for puzzle in Puzzle.objects.filter(dataset="hosted:standin"):
        hosted = puzzle.public["hosted"]
        address = Address(**hosted["address"])
        fetched = client.fetch(address)  # afresh: stateful families need it
        assert fetched["puzzle_id"] == hosted["puzzle_id"]
        for answer in puzzle.truth["answers"]:
            verdict = client.check(address.family, hosted["puzzle_id"], answer).body
        assert verdict["correct"] is True, puzzle
    for jigsaw in Puzzle.objects.filter(type="standin:Static_Jigsaw"):
        assert jigsaw.truth["answers"] == [data.jigsaw(jigsaw.index)["correct_positions"]]


def test_stored_payloads_carry_no_truth_and_stateful_ones_none(standin):
    run("add", "standin", "--url", standin.url)
    run("draw", "standin", "--per-type", "3", "--seed", "1")
    for puzzle in Puzzle.objects.filter(dataset="hosted:standin"):
        public = json.dumps(puzzle.public)
        assert not [value for value in data.truth_values() if value in public], puzzle
        stateful = puzzle.public["hosted"]["family"] in NEXTGEN.stateful
        assert (puzzle.public["payload"] is None) is stateful


def test_draw_takes_each_stored_puzzle_once_and_keeps_earlier_draws(standin):
    run("add", "standin", "--url", standin.url)
    said = run("draw", "standin", "--per-type", "5", "--types", "Dice_Roll_Path")
    assert "Dice_Roll_Path                  3 drawn; 5 asked, the server has 3" in said
    assert sorted(Puzzle.objects.values_list("source_id", flat=True)) == ["index=0", "index=1", "index=2"]
    again = run("draw", "standin", "--per-type", "5", "--types", "Dice_Roll_Path")
    assert "0 drawn; 3 drawn before" in again
    assert Puzzle.objects.count() == 3


def test_draw_refuses_families_set_aside_or_unknown_and_benchmarks_unknown(standin):
    run("add", "standin", "--url", standin.url)
    with pytest.raises(CommandError, match=r"Mirror: set aside \(.*No puzzles found"):
        run("draw", "standin", "--per-type", "1", "--types", "Mirror")
    with pytest.raises(CommandError, match="Nope: not a family of standin"):
        run("draw", "standin", "--per-type", "1", "--types", "Nope")
    with pytest.raises(CommandError, match=r"no benchmark named 'other' \(registered: standin\)"):
        run("draw", "other", "--per-type", "1")
    with pytest.raises(CommandError, match="--per-type must be at least 1"):
        run("draw", "standin", "--per-type", "0")
    assert not Puzzle.objects.exists()


def test_draw_sets_aside_puzzles_the_peer_does_not_accept_with_the_reason(standin):
    run("add", "standin", "--url", standin.url)
    slow = start_standin(timeout_ms=-GENEROUS_TIMEOUT_MS)  # the same server, now late on every hit
    try:
        Benchmark.objects.filter(name="standin").update(base_url=slow.url)
        said = run("draw", "standin", "--per-type", "2", "--types", "Red_Dot", "Dice_Roll_Path")
    finally:
        slow.process.terminate()
        slow.process.wait(timeout=30)
    assert "Red_Dot                         0 drawn; 2 set aside" in said
    assert said.count("Missed the red dot in time.") == 2
    failed = Puzzle.objects.filter(type="standin:Red_Dot")
    assert [p.status for p in failed] == [Puzzle.Status.FAILED] * 2
    assert all("Missed the red dot in time." in p.truth["set_aside"] for p in failed)
    assert Puzzle.objects.filter(type="standin:Dice_Roll_Path", status=Puzzle.Status.DRAFT).count() == 2
