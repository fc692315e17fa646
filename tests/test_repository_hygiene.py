"""What the checkout itself must hold to: no path of one machine, no command importing another.

A path like the one the reference folder had on the machine the docs were written on means
nothing in another checkout; a helper one command imports from another ties the two together.
No database."""

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A root-level home or work folder, not a URL's path (https://host/home/ stays allowed).
MACHINE_PATH = re.compile(r"(?<![\w.:/~-])/(?:work|home|Users|root)/")


def tracked_files() -> list[Path]:
    """The files git tracks in this checkout (skips when this is not a git checkout)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in listing.decode().split("\0") if name]


def text_of(path: Path) -> str:
    """The file's text, or "" for a binary or vanished file."""
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
        return ""


def test_no_tracked_file_names_a_machine_path():
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in tracked_files()
        for number, line in enumerate(text_of(path).splitlines(), 1)
        if MACHINE_PATH.search(line)
    ]
    assert not found, f"absolute paths of one machine (use a path relative to the checkout): {found}"


def test_the_machine_path_pattern_tells_paths_from_urls():
    assert MACHINE_PATH.search("see /wo" + "rk/shared/reference/")
    assert MACHINE_PATH.search("(`/ho" + "me/someone/data`)")
    assert not MACHINE_PATH.search("https://example.org/home/index.html")
    assert not MACHINE_PATH.search("../shared/reference/captchaarena-page/")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_imports = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    plain = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return from_imports | plain


def test_no_module_imports_from_a_management_command():
    # Commands share helpers through a module (annotation/management/common.py), not each other.
    sources = [path for path in tracked_files() if path.suffix == ".py" and path.exists()]
    found = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in sources
        for module in imported_modules(path)
        if ".management.commands." in module
    }
    assert not found, f"imports from a management command: {sorted(found)}"
