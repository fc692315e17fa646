"""The fault suite's counts: one row per scenario, shown at the end of the run (conftest's
pytest_terminal_summary) and written to ARENA_FAULTS_OUT (default /tmp/arena-faults) as
report.txt and report.json.

Columns: events the page (or the test's client) generated, each with its own number; how many of
those numbers are stored; lost (generated, not stored); duplicated (stored more than once);
attempts scored of attempts run; and the time to recover, per attempt: the longest the page waited
for an acknowledgement (batches pending, none acknowledged) from the fault's start until the fault
was over and the server had acknowledged a batch made after it (tests/faults/harness.py,
`recovered`). Measured and reported, never asserted.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

OUT_DIR = Path(os.environ.get("ARENA_FAULTS_OUT", "/tmp/arena-faults"))


@dataclass
class Row:
    scenario: str
    generated: int = 0
    stored: int = 0
    lost: int = 0
    duplicated: int = 0
    scored: int = 0
    attempts: int = 0
    recovery_s: list[float] = field(default_factory=list)
    note: str = ""

    def add(self, tally: dict, *, scored: bool, recovery_s: float | None) -> None:
        self.generated += tally["generated"]
        self.stored += tally["stored"]
        self.lost += tally["lost"]
        self.duplicated += tally["duplicated"]
        self.scored += int(scored)
        self.attempts += 1
        if recovery_s is not None:
            self.recovery_s.append(round(recovery_s, 2))


ROWS: list[Row] = []


def row(scenario: str, note: str = "") -> Row:
    """A new row of the table, kept even if the test fails after filling it in."""
    made = Row(scenario, note=note)
    ROWS.append(made)
    return made


HEADER = ("scenario", "generated", "stored", "lost", "duplicated", "scored", "recovery s")


def table(rows: list[Row]) -> list[str]:
    cells = [HEADER] + [
        (
            r.scenario,
            str(r.generated),
            str(r.stored),
            str(r.lost),
            str(r.duplicated),
            f"{r.scored}/{r.attempts}",
            " / ".join(f"{s:.2f}" for s in r.recovery_s) or "-",
        )
        for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))) for line in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"  {r.scenario}: {r.note}" for r in rows if r.note]
    return lines + (["", "notes:", *notes] if notes else [])


def write(rows: list[Row], load: tuple[float, float, float]) -> Path:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    text = "\n".join(table(rows)) + f"\n\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n"
    (OUT_DIR / "report.txt").write_text(text)
    (OUT_DIR / "report.json").write_text(
        json.dumps({"rows": [asdict(r) for r in rows], "load_average": load}, indent=1)
    )
    return OUT_DIR / "report.txt"
