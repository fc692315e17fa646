"""A cell a spreadsheet would run as a formula never leaves the site as one: every CSV it writes
(the labels, the report's two, the per-participant export) quotes it with a leading apostrophe,
and numbers stay numbers (arena_site/csv_cells.py)."""

import csv
import io
import json
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from PIL import Image

from annotation.reporting.render import to_csv, to_summary_csv
from annotation.studies.setup import study_create
from puzzles.interop import import_captchaarena
from tests.reporting.report_factory import complete

pytestmark = pytest.mark.django_db

# What a crafted folder, an invite link or a report can carry; each a formula to a spreadsheet.
FORMULAS = ['=HYPERLINK("x.test?pay","pay")', "+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1"]
PRINTABLE = FORMULAS[:4]  # an import refuses an id with a control character, the invite link too


def read(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_puzzle_ids_of_a_crafted_dataset_reach_the_labels_csv_as_text(tmp_path):
    """A dataset in the published layout names its puzzles by file: the names become source ids."""
    folder = tmp_path / "crafted" / "Test" / "Dice_Count_1"
    folder.mkdir(parents=True)
    for name in PRINTABLE:
        Image.new("RGB", (640, 400), (90, 140, 200)).save(folder / name, "PNG")
    (folder / "ground_truth.json").write_text(json.dumps({name: {"sum": 7} for name in PRINTABLE}))
    assert import_captchaarena(tmp_path / "crafted", name="crafted").imported == len(PRINTABLE)
    out = tmp_path / "labels.csv"
    call_command(
        "labels", "export", "--dataset", "import:crafted", "--split", "test", "--out", str(out), stdout=io.StringIO()
    )
    with out.open(newline="", encoding="utf-8") as stream:
        ids = sorted(row["source_id"] for row in csv.DictReader(stream))
    assert ids == sorted("'" + name for name in PRINTABLE)


def test_a_crowd_id_reaches_the_per_participant_csv_as_text(verified):
    verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="s", split="test", puzzles_per_annotator=1)
    for crowd_id in PRINTABLE:
        browser, link = Client(), f"/s/{study.token}/?{urlencode({'PROLIFIC_PID': crowd_id})}"
        browser.get(link)
        assert browser.post(link).status_code == 302  # the consent form posts back to the link
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    rows = read(staff.get(f"/studies/{study.pk}/participants.csv").content.decode())
    assert sorted(row["crowd_id"] for row in rows) == sorted("'" + name for name in PRINTABLE)
    assert {row["PROLIFIC_PID"] for row in rows} == {row["crowd_id"] for row in rows}


def test_a_type_name_reaches_the_report_csv_as_text_and_numbers_stay_numbers():
    report = complete({"types": [{"type": name, "attempts": 2, "pass1": -0.5} for name in FORMULAS]})
    rows = read(to_csv(report))
    assert [row["type"] for row in rows] == ["'" + name for name in FORMULAS]
    assert {row["pass1"] for row in rows} == {"-0.5"}  # a negative number is data, not a formula


def test_the_summary_csv_writes_negative_figures_as_numbers():
    overall = {"pass1_pooled": -0.25, "ci_low": -0.5, "ci_high": 0.125, "attempts": 3}
    report = complete({"overall": overall, "annotators": 2})
    (pooled,) = [row for row in read(to_summary_csv(report)) if row["measure"] == "pass1_pooled"]
    assert (pooled["value"], pooled["ci_low"], pooled["ci_high"], pooled["n"]) == ("-0.25", "-0.5", "0.125", "3")
