"""The system prompt of a run: the trained one, from the user's file or from the public client.

The project does not hold CaptchaAgent's prompt. `--system-prompt-file FILE` sends the file's
bytes as they are (decoded as UTF-8; nothing stripped, no line endings changed).
`--captchaarena-client PATH` loads PATH/agent_frameworks/computeruse_cli.py (its top-level
imports are the standard library's) and calls its single-puzzle SFT prompt builder for each
puzzle with the puzzle's published-style page URL and the 1280x1080 viewport, as the client does.
A run records where its prompt came from and the file's sha256, so a resumed run refuses a
prompt that changed. openai-tools may do without: it then sends TOOLS_PROMPT.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable
from pathlib import Path

from annotation.agents.published import DEFAULT_PAGE, page_url

CLIENT_FILE = Path("agent_frameworks") / "computeruse_cli.py"
CLIENT_BUILDER = "_build_single_puzzle_system_prompt_sft"
VIEWPORT = (1280, 1080)
TOOLS_PROMPT = (
    "You are solving a CAPTCHA puzzle on a web page of 1280x1080 pixels. You see screenshots only. "
    "Use the tools to act on the page: click, drag, hold and type_text take page pixel coordinates; "
    "screenshot shows you the page again. Read the instruction at the top of the page. Press the "
    "Submit button when you are done (some puzzles submit by themselves)."
)


class PromptError(ValueError):
    """The prompt cannot be had as asked; the message says why."""


class PromptSource:
    """Where a run's system prompt comes from; `for_puzzle` gives it for one puzzle."""

    def __init__(self, *, file: str | None = None, client: str | None = None, page: str = DEFAULT_PAGE):
        if file and client:
            raise PromptError("give --system-prompt-file or --captchaarena-client, not both")
        self.file, self.client, self.page = file, client, page
        self._builder: Callable[[str, int, int], str] | None = None
        self._text: str | None = None
        self.sha256 = ""
        if file:
            data = _read(Path(file))
            self._text, self.sha256 = data.decode("utf-8"), hashlib.sha256(data).hexdigest()
        elif client:
            self._builder, self.sha256 = _client_builder(Path(client))

    @property
    def given(self) -> bool:
        return bool(self.file or self.client)

    def for_puzzle(self, folder: str, puzzle_id: str) -> str:
        if self._text is not None:
            return self._text
        if self._builder is not None:
            return self._builder(page_url(self.page, folder, puzzle_id), *VIEWPORT)
        return TOOLS_PROMPT

    def describe(self) -> dict:
        """What a run keeps of its prompt source (never the prompt itself)."""
        return {"file": self.file, "client": self.client, "page": self.page, "sha256": self.sha256}

    @classmethod
    def from_settings(cls, settings: dict) -> PromptSource:
        """The source a run recorded, checked to be unchanged."""
        source = cls(file=settings.get("file"), client=settings.get("client"), page=settings.get("page", DEFAULT_PAGE))
        if source.sha256 != settings.get("sha256", ""):
            raise PromptError(f"the prompt at {source.file or source.client} changed since the run started")
        return source


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise PromptError(f"cannot read the system prompt file: {error}") from None


def _client_builder(checkout: Path) -> tuple[Callable[[str, int, int], str], str]:
    """The prompt builder of a checkout of the public client, and its module file's sha256."""
    path = checkout / CLIENT_FILE
    data = _read(path)
    name = f"captchaarena_client_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PromptError(f"{path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # whatever the client's own code raises
        raise PromptError(f"{path} fails to load: {type(error).__name__}: {error}") from None
    builder = getattr(module, CLIENT_BUILDER, None)
    if not callable(builder):
        raise PromptError(f"{path} has no {CLIENT_BUILDER}()")
    return builder, hashlib.sha256(data).hexdigest()
