"""The published CaptchaArena layout, both ways (docs/captchaarena-layout.md).

- puzzles/interop_files.py: the layout on disk, folders and file names;
- puzzles/interop_import.py: a dataset in that layout into the bank, each broken entry named;
- puzzles/interop_export.py: a dataset of the bank out, for the published server, page and
  replay client as they are (puzzles/layout.py: the published page's geometry).
"""

from puzzles.interop_export import ExportResult, export_captchaarena
from puzzles.interop_import import (
    ImportPlan,
    ImportResult,
    NoSplitFolder,
    import_captchaarena,
    import_plan,
    import_run,
)

__all__ = [
    "ExportResult",
    "ImportPlan",
    "ImportResult",
    "NoSplitFolder",
    "export_captchaarena",
    "import_captchaarena",
    "import_plan",
    "import_run",
]
