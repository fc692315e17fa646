"""Static files under a versioned path (arena_site/static_version.py), kept by browsers for good."""

import asyncio
import re

import pytest
from django.conf import settings
from django.test import Client

from arena_site.static_version import app_static_folders, static_version
from tests.asgi_http import exchange, http_scope


def _get(path: str) -> tuple[int, dict[bytes, bytes], bytes]:
    """A GET through the real ASGI application (its static handler sits in front of Django)."""
    requests = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        if requests:
            return requests.pop()
        await asyncio.sleep(3600)  # the client stays until the answer is sent

    start, body, _ = exchange(http_scope("GET", path, [(b"host", b"testserver")]), receive)
    return start["status"], {name.lower(): value for name, value in start["headers"]}, body


def _version() -> str:
    return static_version([*settings.STATICFILES_DIRS, *app_static_folders(settings.INSTALLED_APPS)])


def test_the_version_follows_every_file_and_its_name(tmp_path):
    (tmp_path / "arena").mkdir()
    (tmp_path / "arena" / "play.js").write_text("one")
    (tmp_path / "arena" / "play.css").write_text("two")
    first = static_version([tmp_path])
    assert re.fullmatch(r"[0-9a-f]{12}", first)
    assert static_version([tmp_path]) == first
    (tmp_path / "arena" / "play.js").write_text("one!")
    edited = static_version([tmp_path])
    (tmp_path / "arena" / "play.js").rename(tmp_path / "arena" / "stage.js")
    renamed = static_version([tmp_path])
    assert len({first, edited, renamed}) == 3


def test_the_site_links_the_versioned_path_and_it_is_served_to_keep():
    version = _version()
    assert f"/static/{version}/" == settings.STATIC_URL
    page = Client().get("/accounts/login/").content.decode()
    assert f'href="/static/{version}/arena/site.css"' in page
    status, headers, body = _get(f"/static/{version}/arena/play.js")
    assert status == 200 and b'from "./stage.js"' in body  # its imports resolve under the same version
    assert headers[b"cache-control"] == b"public, max-age=31536000, immutable"
    admin = _get(f"/static/{version}/admin/css/base.css")  # an app's own files, under the same version
    assert admin[0] == 200 and admin[1][b"cache-control"] == b"public, max-age=31536000, immutable"


def test_the_version_covers_the_apps_static_files():
    assert any(
        folder.parts[-3:] == ("contrib", "admin", "static") for folder in app_static_folders(settings.INSTALLED_APPS)
    )


def test_another_releases_path_gets_this_releases_file_never_to_be_kept():
    """During a rolling deploy a page from one replica may ask another for its scripts."""
    version = _version()
    status, headers, body = _get("/static/000000000000/arena/play.js")
    assert status == 200 and body == _get(f"/static/{version}/arena/play.js")[2]
    assert headers[b"cache-control"] == b"no-store"


@pytest.mark.django_db
def test_a_missing_file_or_an_unversioned_path_is_not_found_and_not_kept():
    version = _version()
    outside = (
        f"/static/{version}/../settings.py",
        f"/static/{version}/%2e%2e/arena_site/settings.py",
    )  # as daphne decodes
    for path in (f"/static/{version}/arena/nothing.js", "/static/arena/play.js", *outside):
        status, headers, _ = _get(path)
        assert status == 404, path
        assert b"immutable" not in headers.get(b"cache-control", b""), path
