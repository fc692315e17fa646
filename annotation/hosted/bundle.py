"""Our recorder as one classic script for a peer's page (docs/hosted.md, "The recorder").

The recorder is static/arena/recorder.js over events.js and stage.js, ES modules as our own page
loads them. On a peer's page it must run before the peer's scripts: a module is deferred (it runs
once the page is parsed and its imports fetched, one after another), so a page that draws its
puzzle first could be answered before the recorder listened, its press unlogged and its check
unseen. A classic script in <head> blocks the parser until it has run. So the proxy serves the same
three files joined, each in a function scope of its own that returns what the next one imports:
the same source, no second copy to keep. It goes inline, in the page's HTML (proxy.with_recorder).
"""

from __future__ import annotations

import functools
import re

from django.contrib.staticfiles import finders

ENTRY = "arena/recorder.js"
IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([\w.-]+)";\n', re.MULTILINE)
EXPORT = re.compile(r"^export (?=(?:async )?function|const|let|class)", re.MULTILINE)


class BundleError(Exception):
    """The recorder's modules use a form of import or export the join does not handle."""


@functools.cache
def recorder_bundle() -> bytes:
    """The recorder and what it imports, joined into one classic script (cached per process: the
    static files of a release never change)."""
    order: list[str] = []
    wanted: dict[str, set[str]] = {}
    _visit(ENTRY, order, wanted)
    parts = ['"use strict";']
    for name in order:
        parts.append(_scoped(name, sorted(wanted.get(name, set()))))
    script = "(() => {\n" + "\n".join(parts) + "\n})();\n"
    # Inline in the page's HTML: "</" would end the <script> element early ("<\/" is the same in JS).
    return script.replace("</", "<\\/").encode()


def _visit(name: str, order: list[str], wanted: dict[str, set[str]]) -> None:
    if name in order:
        return
    for names, dependency in IMPORT.findall(_source(name)):
        path = f"arena/{dependency}"
        wanted.setdefault(path, set()).update(n.strip() for n in names.split(",") if n.strip())
        _visit(path, order, wanted)
    order.append(name)


def _scoped(name: str, exported: list[str]) -> str:
    """One module in a scope of its own: its imports read from the modules before it."""
    source = _source(name)
    imports = [
        f"const {{ {names.strip()} }} = {_variable('arena/' + dependency)};"
        for names, dependency in IMPORT.findall(source)
    ]
    body = EXPORT.sub("", IMPORT.sub("", source))
    if re.search(r"^(import|export)\b", body, re.MULTILINE):
        raise BundleError(f"{name}: an import or export the recorder's join does not handle")
    returned = f"return {{ {', '.join(exported)} }};" if exported else ""
    return f"const {_variable(name)} = (() => {{\n" + "\n".join(imports) + f"\n{body}\n{returned}\n}})();"


def _variable(name: str) -> str:
    return "module_" + re.sub(r"\W", "_", name)


def _source(name: str) -> str:
    found = finders.find(name)
    if isinstance(found, list):
        found = found[0] if found else None
    if not found:
        raise BundleError(f"no static file {name}")
    with open(found, encoding="utf-8") as file:
        return str(file.read())
