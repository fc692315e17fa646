"""The Flask CAPTCHA app's protocol and its dialects: what differs between the servers, as data.

One record a server (docs/hosted.md has the table these were read from). The client, the probe and
the truth stripper read these fields and never branch on a dialect's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any
from urllib.parse import urlencode


class Addressing(str, Enum):
    INDEX_OR_SEED = "index_or_seed"  # ?puzzle_index=I for stored families, ?seed=S for those it makes
    ID = "id"  # ?id=<puzzle id>
    NONE = "none"  # no address: the next puzzle of a global counter


class Listing(str, Enum):
    TYPES = "types"  # {"types": [...]} or a plain list
    BY_TYPE = "by_type"  # {"<family>": ["<puzzle id>", ...]}


class Route(str, Enum):
    FETCH = "fetch"
    CHECK = "check"
    OTHER = "other"


# Echoes and counters every dialect's responses carry that no page needs to draw or answer:
# the submitted answer and times sent back, the shared session's counts of everyone's verdicts.
ECHOES = frozenset({"user_answer", "elapsed_time", "action_sequence", "type_stats", "debug_info"})
# What a page must still read from a check: the verdict and the next step of a multi-step family.
CHECK_KEEPS = frozenset({"correct", "status", "next_dot", "hits_completed", "required_hits", "timeout_ms", "message"})


@dataclass(frozen=True)
class Address:
    """A puzzle as its peer names it: its family and a seed, an index or an id (or nothing)."""

    family: str
    seed: int | None = None
    index: int | None = None
    puzzle_id: str | None = None

    def source_id(self) -> str:
        """Puzzle.source_id: the address in one short string."""
        if self.seed is not None:
            return f"seed={self.seed}"
        if self.index is not None:
            return f"index={self.index}"
        return f"id={self.puzzle_id}"

    def number(self) -> int | None:
        return self.seed if self.seed is not None else self.index

    def as_dict(self) -> dict[str, Any]:
        found = {"seed": self.seed, "index": self.index, "puzzle_id": self.puzzle_id}
        return {"family": self.family, **{k: v for k, v in found.items() if v is not None}}


@dataclass(frozen=True)
class Dialect:
    name: str
    title: str
    list_route: str
    listing: Listing
    fetch_route: str
    addressing: Addressing
    check_route: str = "/api/check_answer"
    seeded: frozenset[str] = frozenset()  # families the server makes from a seed
    stateful: frozenset[str] = frozenset()  # per-fetch state in server memory, single use
    multi_step: frozenset[str] = frozenset()  # answered hit by hit, timed by the server
    # Truth fields per route, removed at any depth of a JSON body before a page sees it.
    truth_fields: dict[Route, frozenset[str]] = field(default_factory=dict)
    refused_paths: frozenset[str] = frozenset()  # truth and debug routes, never forwarded
    refused_prefixes: tuple[str, ...] = ()
    refused_params: frozenset[str] = frozenset()  # debug switches of get_puzzle and the page
    page_notes: dict[str, str] = field(default_factory=dict)  # what is known of a family's page

    def fetch_query(self, address: Address) -> dict[str, Any]:
        """The query of the fetch route for this address."""
        if self.addressing is Addressing.ID:
            return {"type": address.family, "id": address.puzzle_id}
        if self.addressing is Addressing.INDEX_OR_SEED and address.seed is not None:
            return {"type": address.family, "seed": address.seed}
        if self.addressing is Addressing.INDEX_OR_SEED and address.index is not None:
            return {"type": address.family, "puzzle_index": address.index}
        return {"type": address.family}

    def page_path(self, address: Address) -> str:
        """The peer's own page for this puzzle ("/" when its page takes no address)."""
        if self.addressing is Addressing.ID:
            query = {"single_puzzle": "true", "puzzle_type": address.family, "puzzle_id": address.puzzle_id}
        elif self.addressing is Addressing.INDEX_OR_SEED:
            query = self.fetch_query(address)
        else:
            return "/"
        return "/?" + urlencode(query)

    def address_kind(self, family: str) -> str:
        if self.addressing is Addressing.ID:
            return "id"
        if self.addressing is Addressing.NONE:
            return "none"
        return "seed" if family in self.seeded else "index"

    def route_of(self, path: str) -> Route:
        if path == self.check_route:
            return Route.CHECK
        if path in (self.fetch_route, "/api/get_puzzle"):
            return Route.FETCH
        return Route.OTHER


TRUTH_FILE = re.compile(r"^/captcha_data/.*(\.json|/masks/.*)$", re.IGNORECASE)
# Every dialect's check answers `correct_answer`; `details` carries positions and targets.
CHECK_TRUTH = frozenset({"correct_answer", "details", "correct_positions"})

NEXTGEN = Dialect(
    name="nextgen",
    title="Next-Gen CAPTCHAs",
    list_route="/api/puzzle_types",
    listing=Listing.TYPES,
    fetch_route="/api/get_puzzle",
    addressing=Addressing.INDEX_OR_SEED,
    seeded=frozenset({"Red_Dot", "Static_Jigsaw", "Map_Parity"}),
    stateful=frozenset({"Red_Dot", "Spooky_Size", "Static_Jigsaw", "Map_Parity"}),
    multi_step=frozenset({"Red_Dot"}),
    truth_fields={
        Route.FETCH: frozenset({"shuffled_order", "correct_positions", "dot_sequence", "answer", "cipher_state"}),
        Route.CHECK: CHECK_TRUTH,
    },
    refused_paths=frozenset(
        {
            "/api/get_ground_truth",
            "/api/last_result",
            "/api/clear_last_result",
            "/api/benchmark_results",
            "/api/agent_metadata",
        }
    ),
    refused_params=frozenset({"debug_type", "show_viz"}),
    page_notes=dict.fromkeys(
        ("Static_Jigsaw", "Dynamic_Jigsaw", "Spooky_Jigsaw"),
        "its page numbers pieces by shuffled_order, which the server no longer sends: "
        "expect the page check to find that a correct assembly is judged wrong",
    ),
)

_ARENA_FETCH_TRUTH = frozenset(
    {"answer", "correct_option_index", "correct_patches", "avoid_area", "slider_track_y", "solution_line"}
)

CAPTCHAARENA = Dialect(
    name="captchaarena",
    title="the published CaptchaArena app",
    list_route="/api/list_puzzles",
    listing=Listing.BY_TYPE,
    fetch_route="/api/get_puzzle_by_id",
    addressing=Addressing.ID,
    truth_fields={Route.FETCH: _ARENA_FETCH_TRUTH, Route.CHECK: CHECK_TRUTH},
    refused_paths=frozenset({"/api/get_ground_truth", "/api/benchmark_results", "/api/save_trajectory", "/study"}),
    refused_prefixes=("/api/study/",),
    refused_params=frozenset({"debug_type", "split"}),
    page_notes={"Pick_Area": "its page posts get_ground_truth on every click (refused: the marker stays uncoloured)"},
)

OPENCAPTCHAWORLD = Dialect(
    name="opencaptchaworld",
    title="Open CaptchaWorld",
    list_route="/api/types",
    listing=Listing.TYPES,
    fetch_route="/api/get_puzzle",
    addressing=Addressing.NONE,
    truth_fields={Route.FETCH: _ARENA_FETCH_TRUTH, Route.CHECK: CHECK_TRUTH},
    refused_paths=frozenset({"/api/get_ground_truth", "/api/benchmark_results"}),
    refused_params=frozenset({"debug_type"}),
    page_notes={"Pick_Area": "its page posts get_ground_truth on every click (refused: the marker stays uncoloured)"},
)

DIALECTS: dict[str, Dialect] = {d.name: d for d in (NEXTGEN, CAPTCHAARENA, OPENCAPTCHAWORLD)}


class UnknownDialect(LookupError):
    pass


def get_dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise UnknownDialect(f"unknown dialect {name!r}; known: {', '.join(sorted(DIALECTS))}") from None
