"""Off-origin files a peer's page loads (three.js from a CDN), served from local copies pinned by hash.

A benchmark's `assets` map each URL its page names to `{sha256, source}`; the source says where the
set-up fetches the file (`npm:<package>@<version>/<path in the package>`, from the npm registry).
Copies live in settings.ARENA_HOSTED_ASSETS under their sha256, checked when fetched and again when
first served; the proxy answers `/__arena/asset/<sha256>` from them and rewrites the page's URL to
that path. The attempt's CSP refuses every other off-origin load, so a URL not pinned fails on the
page (and in the page check) instead of reaching the network.
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

ASSET_PATH = "/__arena/asset/"
NPM_SOURCE = re.compile(r"npm:(?P<package>(@[a-z0-9._-]+/)?[a-z0-9._-]+)@(?P<version>[0-9][\w.+-]*)/(?P<file>[\w./-]+)")
NPM_REGISTRY = "https://registry.npmjs.org"
FETCH_TIMEOUT_S = 60
MAX_TARBALL = 64 * 1024 * 1024

# What each dialect's page is known to load off-origin (docs/hosted.md's table): copied to a new
# benchmark's `assets` when it is added. Google Fonts is left out: the page falls back to local fonts.
DIALECT_ASSETS: dict[str, dict[str, dict[str, str]]] = {
    "nextgen": {
        "https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js": {
            "sha256": "9274bbcec8d96168626c732b5d31c775aa8cfb7eaa0599bec0c175908a2c1ce2",
            "source": "npm:three@0.128.0/build/three.min.js",
        }
    },
}


def dialect_assets(dialect: str) -> dict[str, dict[str, str]]:
    return {url: dict(pin) for url, pin in DIALECT_ASSETS.get(dialect, {}).items()}


class AssetProblem(RuntimeError):
    """A pinned copy that cannot be fetched or does not match its hash."""


@dataclass(frozen=True)
class Pinned:
    url: str
    sha256: str
    source: str

    @property
    def local_path(self) -> str:
        return ASSET_PATH + self.sha256


def pins(assets: dict[str, Any]) -> list[Pinned]:
    return [Pinned(url, str(pin["sha256"]), str(pin.get("source", ""))) for url, pin in sorted(assets.items())]


def copy_path(sha256: str) -> Path:
    return Path(settings.ARENA_HOSTED_ASSETS) / sha256


def missing(assets: dict[str, Any]) -> list[Pinned]:
    """Pins with no local copy yet (a page needing one fails until `benchmarks assets` runs)."""
    return [pin for pin in pins(assets) if not copy_path(pin.sha256).is_file()]


def read_copy(sha256: str) -> bytes | None:
    """The pinned copy's bytes, or None when absent or not matching its name."""
    path = copy_path(sha256)
    if not re.fullmatch(r"[0-9a-f]{64}", sha256) or not path.is_file():
        return None
    data = path.read_bytes()
    return data if hashlib.sha256(data).hexdigest() == sha256 else None


def fetch_copy(pin: Pinned) -> Path:
    """Fetch a pinned file from its source into the copies folder, refusing a hash that differs."""
    data = _from_npm(pin.source)
    found = hashlib.sha256(data).hexdigest()
    if found != pin.sha256:
        raise AssetProblem(f"{pin.source}: sha256 {found}, pinned {pin.sha256}; not kept")
    path = copy_path(pin.sha256)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _from_npm(source: str) -> bytes:
    found = NPM_SOURCE.fullmatch(source)
    if found is None:
        raise AssetProblem(f"{source!r}: only npm:<package>@<version>/<file> sources can be fetched")
    package, version, name = found["package"], found["version"], found["file"]
    tarball = f"{NPM_REGISTRY}/{package}/-/{package.rsplit('/', 1)[-1]}-{version}.tgz"
    try:
        with urllib.request.urlopen(tarball, timeout=FETCH_TIMEOUT_S) as response:
            raw = response.read(MAX_TARBALL)
    except OSError as error:
        raise AssetProblem(f"{tarball}: {getattr(error, 'reason', error)}") from error
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as archive:
        try:
            member = archive.extractfile(f"package/{name}")
        except KeyError:
            member = None
        if member is None:
            raise AssetProblem(f"{tarball} has no package/{name}")
        return member.read()


def rewrite_page(html: str, assets: dict[str, Any]) -> str:
    """The page with each pinned URL pointing at its local copy on the attempt's own host."""
    for pin in pins(assets):
        html = html.replace(pin.url, pin.local_path)
    return html
