"""The benchmark registry: add a server (probing each family it lists), list them, draw puzzles.

A family is served when the peer accepts its own truth for one puzzle through its API; otherwise it
is set aside with the peer's words. Drawn puzzles are Puzzle rows of dataset `hosted:<name>`, type
`<name>:<Family>`, addressed as the peer addresses them (docs/hosted.md).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.utils import timezone

from annotation.hosted.assets import dialect_assets
from annotation.hosted.client import PeerClient, PeerRefused, PeerUnreachable
from annotation.hosted.dialects import Address, Addressing, Dialect, UnknownDialect, get_dialect
from annotation.hosted.probe import Checked, ProbeFailure, check_with_truth
from annotation.hosted.truth import strip_truth
from annotation.models import Benchmark, BenchmarkFamily
from puzzles.hosted_names import BENCHMARK_NAME, FAMILY_NAME, hosted_dataset, hosted_type
from puzzles.models import Puzzle

SEED_RANGE = 1_000_000  # seeds drawn for the families a server makes


class HostedError(ValueError):
    """What a staff member must read: a name taken, an unknown dialect, a server that does not answer."""


@dataclass
class FamilyProbe:
    family: str
    served: bool
    reason: str = ""
    size: int | None = None


@dataclass
class FamilyDraw:
    family: str
    drawn: int = 0
    already: int = 0  # rows of an earlier draw at the same address, kept as they were
    repeats: int = 0  # addresses that gave a puzzle already drawn (an index wrapping, a counter cycling)
    set_aside: list[tuple[str, str]] = field(default_factory=list)  # (source_id, reason)


def benchmark_add(
    *, name: str, url: str, dialect: str = "nextgen", truth_public: bool = False, published_set: bool = False
) -> Benchmark:
    """Register a server: it must answer its listing; every family it lists is probed."""
    speech = _dialect(dialect)
    _check_new_name(name)
    _check_url(url)
    client = PeerClient(url, speech)
    listing = _listing(client)
    probes = [probe_family(client, family, ids) for family, ids in listing.items()]
    with transaction.atomic():
        benchmark = Benchmark.objects.create(
            name=name,
            base_url=url,
            dialect=speech.name,
            truth_public=truth_public,
            published_set=published_set,
            assets=dialect_assets(speech.name),
        )
        _store_probes(benchmark, speech, probes)
    return benchmark


def probe_family(client: PeerClient, family: str, ids: list[str] | None = None) -> FamilyProbe:
    """Check one puzzle of the family with the peer's own truth (served), or say why not (set aside)."""
    if not FAMILY_NAME.fullmatch(family):
        return FamilyProbe(family[:39], False, "its name cannot be a puzzle type here (letters, digits, _; 39 at most)")
    if ids is not None and not ids:
        return FamilyProbe(family, False, "the server lists no puzzle of it")
    address = _first_address(client.dialect, family, ids)
    try:
        checked = check_with_truth(client, address)
    except ProbeFailure as failure:
        return FamilyProbe(family, False, str(failure)[:500])
    return FamilyProbe(family, True, size=_size(client.dialect, family, checked, ids))


def benchmark_draw(
    *, name: str, per_type: int, types: list[str] | None = None, split: str = "test", seed: int = 0
) -> list[FamilyDraw]:
    """Draw per_type puzzles of each served family (or of those named), checked through the API."""
    benchmark = find_benchmark(name)
    if per_type < 1:
        raise HostedError("--per-type must be at least 1")
    families = _families_to_draw(benchmark, types)
    client = PeerClient(benchmark.base_url, _dialect(benchmark.dialect))
    listing = _listing(client) if client.dialect.addressing is Addressing.ID else {}
    rng = random.Random(seed)
    return [_draw_family(benchmark, client, row, per_type, split, rng, listing.get(row.family)) for row in families]


def find_benchmark(name: str) -> Benchmark:
    found = Benchmark.objects.filter(name=name).first()
    if found is None:
        known = ", ".join(Benchmark.objects.values_list("name", flat=True)) or "none yet"
        raise HostedError(f"no benchmark named {name!r} (registered: {known})")
    return found


def _dialect(name: str) -> Dialect:
    try:
        return get_dialect(name)
    except UnknownDialect as unknown:
        raise HostedError(str(unknown)) from None


def _check_new_name(name: str) -> None:
    if not BENCHMARK_NAME.fullmatch(name):
        raise HostedError(f"benchmark name {name!r}: use 1-24 lowercase letters, digits or hyphens, a letter first")
    taken = Benchmark.objects.filter(name=name).first()
    if taken:
        raise HostedError(f"the name {name!r} is taken: {taken.base_url}, added {taken.added_at:%Y-%m-%d %H:%M}")


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise HostedError(f"--url {url!r}: give the server's base URL, e.g. http://127.0.0.1:7860")


def _listing(client: PeerClient) -> dict[str, list[str] | None]:
    try:
        listing = client.listing()
    except (PeerUnreachable, PeerRefused) as problem:
        raise HostedError(f"{client.base_url} does not answer as {client.dialect.title}: {problem}") from None
    if not listing:
        raise HostedError(f"{client.base_url} lists no families at {client.dialect.list_route}")
    return listing


def _first_address(dialect: Dialect, family: str, ids: list[str] | None) -> Address:
    if dialect.addressing is Addressing.ID:
        return Address(family, puzzle_id=(ids or [""])[0])
    if dialect.addressing is Addressing.NONE:
        return Address(family)
    return Address(family, seed=0) if family in dialect.seeded else Address(family, index=0)


def _size(dialect: Dialect, family: str, checked: Checked, ids: list[str] | None) -> int | None:
    if ids is not None:
        return len(ids)
    stats = checked.puzzle.get("type_stats")
    if family in dialect.seeded or not isinstance(stats, dict):
        return None
    total = stats.get("total_puzzles")
    return total if isinstance(total, int) and total > 0 else None


def _store_probes(benchmark: Benchmark, dialect: Dialect, probes: list[FamilyProbe]) -> None:
    now = timezone.now()
    BenchmarkFamily.objects.bulk_create(
        BenchmarkFamily(
            benchmark=benchmark,
            family=probe.family,
            status=BenchmarkFamily.Status.SERVED if probe.served else BenchmarkFamily.Status.SET_ASIDE,
            reason=probe.reason,
            stateful=probe.family in dialect.stateful,
            multi_step=probe.family in dialect.multi_step,
            address=dialect.address_kind(probe.family),
            size=probe.size,
            page_note=dialect.page_notes.get(probe.family, ""),
            probed_at=now,
        )
        for probe in probes
    )


def _families_to_draw(benchmark: Benchmark, types: list[str] | None) -> list[BenchmarkFamily]:
    rows = {row.family: row for row in benchmark.families.all()}
    served = [row for row in rows.values() if row.status == BenchmarkFamily.Status.SERVED]
    if not types:
        if not served:
            raise HostedError(f"{benchmark.name} serves no family (benchmarks list {benchmark.name} says why)")
        return served
    problems = [f"{t}: not a family of {benchmark.name}" for t in types if t not in rows]
    problems += [f"{t}: set aside ({rows[t].reason})" for t in types if t in rows and rows[t] not in served]
    if problems:
        raise HostedError("cannot draw " + "; ".join(problems))
    return [rows[t] for t in dict.fromkeys(types)]


def _draw_family(
    benchmark: Benchmark,
    client: PeerClient,
    row: BenchmarkFamily,
    per_type: int,
    split: str,
    rng: random.Random,
    ids: list[str] | None,
) -> FamilyDraw:
    result, seen = FamilyDraw(row.family), Counter[str]()
    for address, puzzle in _addresses(client, row, per_type, rng, ids):
        try:
            checked = check_with_truth(client, address, puzzle)
        except ProbeFailure as failure:
            _store_set_aside(benchmark, row.family, split, address, str(failure), result)
            continue
        seen[checked.puzzle_id] += 1
        if seen[checked.puzzle_id] > 1:
            result.repeats += 1
            continue
        _store_drawn(benchmark, client.dialect, row, split, checked, result)
    return result


def _addresses(
    client: PeerClient, row: BenchmarkFamily, per_type: int, rng: random.Random, ids: list[str] | None
) -> list[tuple[Address, dict[str, Any] | None]]:
    """The addresses to draw (with the puzzle already fetched, for a server without addresses)."""
    family = row.family
    if row.address == "seed":
        return [(Address(family, seed=s), None) for s in rng.sample(range(SEED_RANGE), per_type)]
    if row.address == "index":
        indices = rng.sample(range(row.size), min(per_type, row.size)) if row.size else range(per_type)
        return [(Address(family, index=i), None) for i in sorted(indices)]
    if row.address == "id":
        chosen = rng.sample(ids or [], min(per_type, len(ids or [])))
        return [(Address(family, puzzle_id=i), None) for i in chosen]
    return _next_puzzles(client, family, per_type)


def _next_puzzles(client: PeerClient, family: str, per_type: int) -> list[tuple[Address, dict[str, Any] | None]]:
    """A server without addresses: its next puzzles, until per_type or its sequence comes round."""
    found: list[tuple[Address, dict[str, Any] | None]] = []
    for _ in range(per_type):
        try:
            puzzle = client.fetch(Address(family))
        except PeerRefused:
            break
        if any(address.puzzle_id == puzzle["puzzle_id"] for address, _ in found):
            break
        found.append((Address(family, puzzle_id=puzzle["puzzle_id"]), puzzle))
    return found


def _store_drawn(
    benchmark: Benchmark, dialect: Dialect, row: BenchmarkFamily, split: str, checked: Checked, result: FamilyDraw
) -> None:
    address = checked.address
    if address.puzzle_id is None and dialect.addressing is not Addressing.INDEX_OR_SEED:
        address = Address(address.family, puzzle_id=checked.puzzle_id)
    hosted = {
        "benchmark": benchmark.name,
        "family": row.family,
        "address": address.as_dict(),
        "puzzle_id": checked.puzzle_id,
        "page": dialect.page_path(address),
    }
    # A stateful puzzle is fetched live when its page asks (the peer's clock and state); a stored
    # one is answered from its payload, truth stripped.
    payload = None if row.stateful else strip_truth(dialect, checked.puzzle)
    truth = {"answers": checked.answers, "checked_at": timezone.now().isoformat()}
    _, created = Puzzle.objects.get_or_create(
        dataset=hosted_dataset(benchmark.name),
        type=hosted_type(benchmark.name, row.family),
        split=split,
        source_id=address.source_id(),
        defaults={
            "index": address.number(),
            "public": {"hosted": hosted, "payload": payload},
            "truth": truth,
            "truth_public": benchmark.truth_public,
        },
    )
    if created:
        result.drawn += 1
    else:
        result.already += 1


def _store_set_aside(
    benchmark: Benchmark, family: str, split: str, address: Address, reason: str, result: FamilyDraw
) -> None:
    """A drawn address the peer did not accept its own truth for: kept as failed, with the reason."""
    result.set_aside.append((address.source_id(), reason))
    Puzzle.objects.get_or_create(
        dataset=hosted_dataset(benchmark.name),
        type=hosted_type(benchmark.name, family),
        split=split,
        source_id=address.source_id(),
        defaults={
            "index": address.number(),
            "public": {"hosted": {"benchmark": benchmark.name, "family": family, "address": address.as_dict()}},
            "truth": {"set_aside": reason[:500]},
            "status": Puzzle.Status.FAILED,
            "truth_public": benchmark.truth_public,
        },
    )
