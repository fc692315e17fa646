"""The import rules of the house (docs/architecture.md), checked on the source itself.

- puzzles/ (the bank) never imports annotation/, not even inside a function or a command;
- each annotation domain imports only the domains it is allowed to (live/ imports none);
- no domain imports another domain's views or consumers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent
DOMAINS = ("live", "studies", "review", "reporting", "agents", "datasets", "environment", "hosted")
# Which other domains each domain may import. live/ is the one pipeline everything builds on.
ALLOWED = {
    "live": set(),
    "studies": {"live", "reporting"},
    "review": {"live"},
    "reporting": {"live"},  # read-only: the scoring's windows and measures
    "agents": {"live"},
    # read-only: labels, trajectories; a release reads the studies' quality marks and exclusion rule
    "datasets": {"live", "review", "agents", "reporting", "studies"},
    # An episode is an agent rollout, played by the same engine; its curriculum reads the labels.
    "environment": {"live", "agents", "datasets"},
    # A hosted benchmark's page is played through the same pipeline (the proxy: docs/hosted.md);
    # its page check drives the same Chromium against the same page server as the replay.
    "hosted": {"live", "agents"},
}
ENTRY_POINTS = {"views", "staff_views", "consumers"}  # wired by urls.py and routing.py only


def imported_modules(source: str) -> list[str]:
    """Every module an import statement in the source names, at any depth (absolute names)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # "from a.b import c" names a.b.c (a submodule or a name in a.b): the most specific.
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def violations(root: Path) -> list[str]:
    """Each import under root that breaks a rule, as "module imports target: why"."""
    problems = []
    for path in sorted(_sources(root)):
        module = module_name(path, root)
        if ".migrations." in f".{module}.":
            continue
        for target in imported_modules(path.read_text(encoding="utf-8")):
            why = _broken_rule(module, target)
            if why:
                problems.append(f"{module} imports {target}: {why}")
    return problems


def _sources(root: Path):
    """The project's Python files below its top-level folders; hidden ones (.venv, .git) are not
    the project's, and parsing a virtualenv took most of this test's 40 s."""
    for top in root.iterdir():
        if top.is_dir() and not top.name.startswith("."):
            yield from top.glob("**/*.py")


def _broken_rule(module: str, target: str) -> str | None:
    if module.startswith("puzzles.") and (target == "annotation" or target.startswith("annotation.")):
        return "the bank never imports annotation"
    source, aimed = _domain(module), _domain(target)
    if source is None or aimed is None or source == aimed:
        return None
    if aimed not in ALLOWED[source]:
        return f"{source}/ may import only {sorted(ALLOWED[source]) or 'no other domain'}"
    if target.split(".")[2:3] and target.split(".")[2] in ENTRY_POINTS:
        return "another domain's views and consumers are wired by urls.py and routing.py only"
    return None


def _domain(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "annotation" and parts[1] in DOMAINS else None


def test_the_tree_keeps_the_import_rules():
    assert violations(ROOT) == []


def test_every_domain_is_a_package_with_its_rules_in_its_docstring():
    for domain in DOMAINS:
        doc = ast.get_docstring(ast.parse((ROOT / "annotation" / domain / "__init__.py").read_text()))
        assert doc and "May import" in doc, domain


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("puzzles/management/commands/x.py", "def f():\n    from annotation.models import Attempt\n", "the bank"),
        ("annotation/live/x.py", "from annotation.studies.queue import enrollment_next\n", "live/ may import only"),
        ("annotation/review/x.py", "from annotation.reporting import render\n", "review/ may import only"),
        ("annotation/studies/x.py", "from annotation.live.views import play\n", "views and consumers"),
        ("annotation/studies/x.py", "import annotation.live.consumers\n", "views and consumers"),
        ("annotation/reporting/x.py", "from annotation.environment import contamination\n", "reporting/ may import"),
        ("annotation/environment/x.py", "from annotation.studies.queue import enrollment_next\n", "environment/ may"),
        ("annotation/hosted/x.py", "from annotation.studies.setup import study_setup\n", "hosted/ may import only"),
    ],
)
def test_a_broken_rule_is_caught(tmp_path, module, source, expected):
    path = tmp_path / module
    path.parent.mkdir(parents=True)
    path.write_text(source)
    (found,) = violations(tmp_path)
    assert expected in found


def test_allowed_imports_pass(tmp_path):
    path = tmp_path / "annotation" / "studies" / "x.py"
    path.parent.mkdir(parents=True)
    path.write_text("from annotation.live.attempts import attempt_for\nfrom annotation.models import Study\n")
    assert violations(tmp_path) == []


@pytest.mark.django_db
def test_the_models_need_no_new_migration():
    """Every model change comes with its migration (makemigrations --check exits non-zero if not)."""
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
