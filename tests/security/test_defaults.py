"""Production defaults: no start without a secret key, error pages that show nothing of the
machinery (even DEBUG's), HTTPS-only cookies, HSTS and a strict Content-Security-Policy behind an
HTTPS proxy, and WebSockets only from the site's own origin, port included."""

import asyncio
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core import signing
from django.test import Client, RequestFactory
from django.urls import path
from django.views.debug import get_exception_reporter_class

from annotation.agents.server import database_url
from annotation.models import Enrollment
from annotation.studies.access import RESUME_SALT
from annotation.studies.setup import study_create
from arena_site.asgi import application
from arena_site.middleware import content_security_policy
from arena_site.secret_key import strong
from arena_site.urls import urlpatterns as site_urlpatterns
from tests.test_settings import A_KEY, _settings_values

ROOT = Path(__file__).resolve().parent.parent.parent
DB_PASSWORD = "pg-s3cret-Pw0rd"
REDIS_PASSWORD = "r3dis-s3cret-Pw0rd"
DATABASE_URL = f"postgres://arena:{DB_PASSWORD}@db.internal:5432/arena"
REDIS_URL = f"redis://:{REDIS_PASSWORD}@cache.internal:6379/0"
BANK_SECRET = "bank-Secret-for-the-error-page-test-0123456789"


def boom(request):
    """A view that fails with secrets in its frame and in its message."""
    from django.conf import settings

    connection_url = settings.DATABASE_URL  # noqa: F841  (shown on debug pages as a frame variable)
    raise RuntimeError(f"could not reach {settings.REDIS_URL}")


urlpatterns = [path("boom/", boom), *site_urlpatterns]


@pytest.fixture
def leaky(settings):
    """Settings holding secrets where a debug page would show them."""
    settings.DATABASE_URL = DATABASE_URL
    settings.REDIS_URL = settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = REDIS_URL
    settings.PUZZLE_BANK_SECRET = BANK_SECRET
    settings.ROOT_URLCONF = __name__
    return settings


def secrets_in(text: str, settings) -> list[str]:
    candidates = [DATABASE_URL, REDIS_URL, DB_PASSWORD, REDIS_PASSWORD, BANK_SECRET, settings.SECRET_KEY]
    return [secret for secret in candidates if secret in text]


# --- starting -----------------------------------------------------------------------------------
def test_the_site_refuses_to_start_without_a_secret_key(tmp_path):
    """The default environment (no DEBUG at all): the ASGI application does not load, and says why."""
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "CI", "DATABASE_URL")}
    env["ARENA_VAR_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", "import arena_site.asgi"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set when DEBUG is false" in done.stderr


# --- the signing key ----------------------------------------------------------------------------
PUBLISHED_DEV_KEY = "dev-only-insecure-key-do-not-deploy"  # what `make run` used to sign with


def _without_a_key(tmp_path, **env) -> dict[str, str]:
    full = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "CI", "DATABASE_URL")}
    return {**full, "ARENA_VAR_DIR": str(tmp_path), **env}


def _key_with_debug_on(var_dir: Path) -> str:
    return _settings_values(["SECRET_KEY"], DEBUG="true", ARENA_VAR_DIR=str(var_dir))["SECRET_KEY"]


def test_with_debug_on_the_key_is_made_once_per_machine_and_never_the_published_one(tmp_path):
    first = _key_with_debug_on(tmp_path / "one")
    assert first != PUBLISHED_DEV_KEY and strong(first)
    assert (tmp_path / "one" / "secret-key").read_text().strip() == first
    assert (tmp_path / "one" / "secret-key").stat().st_mode & 0o777 == 0o600
    assert _key_with_debug_on(tmp_path / "one") == first  # a restart signs as before: sessions hold
    assert _key_with_debug_on(tmp_path / "two") != first  # another checkout, another key


@pytest.mark.django_db(transaction=True)
def test_a_resume_link_forged_with_the_published_key_signs_nobody_in_under_make_run(verified, tmp_path):
    """The attack: `make run` (DEBUG on, no SECRET_KEY) once signed with the key in the source, so
    anyone could sign a resume link for another annotator's enrolment. The forged link goes to a
    site started that way, on the database where that annotator joined."""
    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="forged", split="test", puzzles_per_annotator=1)
    assert Client().post(f"/s/{study.token}/").status_code == 302  # a guest joins
    enrollment = Enrollment.objects.get(study=study)
    forged = signing.dumps(enrollment.pk, salt=f"{RESUME_SALT}.{study.token}", key=PUBLISHED_DEV_KEY)
    code = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        f"page = Client().post('/s/{study.token}/resume/{forged}/')\n"
        "print(page.status_code, '_auth_user_id' in page.client.session)\n"
    )
    env = _without_a_key(tmp_path, DEBUG="true", DATABASE_URL=database_url())
    env["DJANGO_SETTINGS_MODULE"] = "arena_site.settings"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["404", "False"]


@pytest.mark.parametrize(
    "key",
    ["x", "abcd" * 13, f"django-insecure-{'k3Yq-Zw7' * 8}", PUBLISHED_DEV_KEY],
    ids=["one character", "four distinct characters", "insecure prefix", "published"],
)
def test_production_refuses_a_key_django_calls_weak(tmp_path, key):
    env = _without_a_key(tmp_path, DEBUG="false", SECRET_KEY=key)
    done = subprocess.run(
        [sys.executable, "-c", "import arena_site.asgi"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is" in done.stderr


def test_the_readme_production_settings_pass_django_deploy_check(tmp_path):
    """README, "Deploying safely": the secrets, DEBUG off, the site's hosts, HTTPS at the proxy."""
    env = _without_a_key(
        tmp_path,
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(48),
        PUZZLE_BANK_SECRET=secrets.token_urlsafe(48),
        ALLOWED_HOSTS="arena.example.org",
        ARENA_BEHIND_HTTPS_PROXY="true",
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "System check identified no issues" in done.stdout


# --- error pages --------------------------------------------------------------------------------
def test_a_missing_page_is_our_plain_page_without_the_url_list(client, leaky):
    page = client.get("/no/such/page/")
    text = page.content.decode()
    assert page.status_code == 404 and "Page not found" in text and "Go to the start page" in text
    assert "URLconf" not in text and "admin/" not in text and "play/&lt;str:uid&gt;" not in text
    assert secrets_in(text, leaky) == []


def test_a_server_error_is_our_plain_page(leaky):
    page = Client(raise_request_exception=False).get("/boom/")
    text = page.content.decode()
    assert page.status_code == 500 and "Something went wrong on our side" in text
    assert "Traceback" not in text and "RuntimeError" not in text and secrets_in(text, leaky) == []


def test_a_bad_host_header_is_a_plain_400(client, leaky):
    page = client.get("/", HTTP_HOST="attacker.example")
    text = page.content.decode()
    assert page.status_code == 400 and "could not be read" in text
    assert "attacker.example" not in text and "ALLOWED_HOSTS" not in text and secrets_in(text, leaky) == []


@pytest.mark.parametrize("accept", ["text/html", "text/plain"])
def test_with_debug_on_the_debug_page_hides_connection_urls_and_secrets(leaky, accept):
    leaky.DEBUG = True
    page = Client(raise_request_exception=False).get("/boom/", HTTP_ACCEPT=accept)
    text = page.content.decode()
    assert page.status_code == 500 and "could not reach" in text  # Django's debug page, not ours
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DATABASES", "CACHES", "CHANNEL_LAYERS"):
        shown_hidden = rf"{name}(</td>\s*<td class=\"code\"><pre>&#x27;| = '| = )\*{{20}}"
        assert re.search(shown_hidden, text), f"{name} is not shown hidden"
    if accept == "text/html":  # the frame's variables are listed, their secret values are not
        assert re.search(r"<td>connection_url</td>\s*<td class=\"code\"><pre>&#x27;\*{20}", text)
    assert secrets_in(text, leaky) == []


@pytest.mark.parametrize(
    ("address", "host", "status"),
    [("/", "attacker.example", 400), ("/media/../x", "testserver", 400), ("/boom/", "testserver", 500)],
)
def test_with_debug_on_no_way_in_reaches_a_secret(leaky, address, host, status):
    """The red team's ways to a debug page: a bad Host header, a path out of the media folder."""
    leaky.DEBUG = True
    page = Client(raise_request_exception=False).get(address, HTTP_HOST=host)
    assert page.status_code == status
    assert secrets_in(page.content.decode(), leaky) == []


def test_error_reports_by_mail_hide_them_too(leaky, rf):
    """The exception reporter is what error e-mails use too, DEBUG or not."""
    request = rf.get("/boom/")
    try:
        boom(request)
    except RuntimeError:
        reporter = get_exception_reporter_class(request)(request, *sys.exc_info(), is_email=True)
    text, html = reporter.get_traceback_text(), reporter.get_traceback_html()
    assert "could not reach" in text and "connection_url" in html
    assert secrets_in(text, leaky) == [] and secrets_in(html, leaky) == []


# --- HTTPS --------------------------------------------------------------------------------------
@pytest.fixture
def behind_https_proxy(settings, tmp_path):
    """The settings the real settings module computes with ARENA_BEHIND_HTTPS_PROXY=true."""
    names = ["SECURE_PROXY_SSL_HEADER", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS"]
    for name, value in _settings_values(
        names, SECRET_KEY=A_KEY, ARENA_BEHIND_HTTPS_PROXY="true", ARENA_VAR_DIR=str(tmp_path)
    ).items():
        setattr(settings, name, tuple(value) if isinstance(value, list) else value)
    return settings


def test_through_the_https_proxy_csp_hsts_and_secure_cookies(behind_https_proxy, db):
    get_user_model().objects.create_user(username="staff", password="a long pass phrase", is_staff=True)
    client = Client()
    page = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
    assert page.status_code == 200
    policy = page["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "unsafe-eval" not in policy
    assert page["Strict-Transport-Security"].startswith("max-age=31536000")
    csrf = page.cookies["csrftoken"]
    assert csrf["secure"] and csrf["httponly"] and csrf["samesite"] == "Lax"
    signed_in = client.post(
        "/accounts/login/",
        {"username": "staff", "password": "a long pass phrase"},
        HTTP_X_FORWARDED_PROTO="https",
    )
    assert signed_in.status_code == 302
    session = signed_in.cookies["sessionid"]
    assert session["secure"] and session["httponly"] and session["samesite"] == "Lax"


def test_plain_http_gets_no_hsts_and_no_policy_to_break_local_runs(behind_https_proxy):
    page = Client().get("/accounts/login/")
    assert page.status_code == 200
    assert "Strict-Transport-Security" not in page and "Content-Security-Policy" not in page


def test_a_download_keeps_its_own_styles(behind_https_proxy, rf):
    """The report is a self-contained HTML file sent as an attachment: no policy on it."""
    from django.http import HttpResponse

    from arena_site.middleware import ContentSecurityPolicyMiddleware

    def download(request):
        response = HttpResponse("<style>h1{}</style>")
        response["Content-Disposition"] = 'attachment; filename="report.html"'
        return response

    response = ContentSecurityPolicyMiddleware(download)(rf.get("/", HTTP_X_FORWARDED_PROTO="https"))
    assert "Content-Security-Policy" not in response


TEMPLATES = ROOT / "templates"
INLINE = {
    "a style attribute": re.compile(r"\sstyle\s*=", re.I),
    "a <style> block": re.compile(r"<style[\s>]", re.I),
    "an event handler attribute": re.compile(r"\son[a-z]+\s*=\s*[\"']", re.I),
    "a javascript: URL": re.compile(r"javascript:", re.I),
}


def test_no_template_needs_inline_script_or_style():
    """What the policy forbids. The report (templates/reporting/) is a downloaded file, exempt."""
    found = []
    for template in TEMPLATES.rglob("*.html"):
        if template.relative_to(TEMPLATES).parts[0] == "reporting":
            continue
        text = template.read_text()
        found += [f"{template.relative_to(ROOT)}: {what}" for what, pattern in INLINE.items() if pattern.search(text)]
        for opening in re.findall(r"<script\b[^>]*>", text, flags=re.I):
            if "src=" not in opening and 'type="application/json"' not in opening:
                found.append(f"{template.relative_to(ROOT)}: an inline script {opening}")
    for script in (ROOT / "static" / "arena").glob("*.js"):
        text = script.read_text()
        if re.search(r"setAttribute\(\s*[\"']style|style\s*=\s*\\?[\"']|<style|cssText|eval\(|new Function", text):
            found.append(f"{script.relative_to(ROOT)}: inline style or evaluated code")
    assert found == []


# --- WebSockets ---------------------------------------------------------------------------------
async def _socket_opens(uid: str, session: str, *headers: tuple[bytes, bytes]) -> bool:
    socket = WebsocketCommunicator(
        application, f"/ws/attempts/{uid}/", headers=[*headers, (b"cookie", f"sessionid={session}".encode())]
    )
    opened, _ = await socket.connect()
    await socket.disconnect()
    return opened


@pytest.mark.django_db(transaction=True)
def test_a_websocket_from_another_port_or_scheme_or_without_origin_is_refused(open_attempt, settings):
    settings.ALLOWED_HOSTS = ["arena.example"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://studies.example"]
    attempt, session = open_attempt("Dice_Count")
    host = (b"host", b"arena.example:8000")

    def opens(*headers):
        return asyncio.run(_socket_opens(attempt.uid, session, *headers))

    assert opens(host, (b"origin", b"http://arena.example:8000"))  # its own page
    assert not opens(host, (b"origin", b"http://arena.example:9000"))  # same host, another port
    assert not opens(host, (b"origin", b"http://arena.example"))  # port 80 is another port
    assert not opens(host, (b"origin", b"https://arena.example:8000"))  # https page, ws socket
    assert not opens(host, (b"origin", b"http://evil.example:8000"))
    assert not opens(host, (b"origin", b"null"))
    assert not opens(host)  # no Origin at all
    assert not opens((b"host", b"evil.example:8000"), (b"origin", b"http://evil.example:8000"))  # not ALLOWED_HOSTS
    assert opens(host, (b"origin", b"https://studies.example"))  # CSRF_TRUSTED_ORIGINS


@pytest.mark.django_db(transaction=True)
def test_behind_the_https_proxy_a_socket_is_from_https_pages(open_attempt, settings):
    settings.ALLOWED_HOSTS = ["arena.example"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    attempt, session = open_attempt("Dice_Count")
    host, https = (b"host", b"arena.example"), (b"x-forwarded-proto", b"https")

    def opens(*headers):
        return asyncio.run(_socket_opens(attempt.uid, session, *headers))

    assert opens(host, https, (b"origin", b"https://arena.example"))
    assert not opens(host, https, (b"origin", b"http://arena.example"))
    assert not opens(host, (b"origin", b"https://arena.example"))  # the proxy did not say https


# --- the pages and the admin in Chromium, under the policy ------------------------------------
@pytest.mark.browser
def test_the_pages_and_the_admin_work_under_the_policy(transactional_db, verified):
    from asgiref.sync import sync_to_async
    from playwright.async_api import async_playwright

    from annotation.agents.browser import CHROMIUM, CHROMIUM_ARGS, READY, signed_in_context
    from annotation.agents.server import live_server
    from annotation.live.attempts import attempt_start, participant_for_user
    from annotation.studies.setup import study_create

    puzzle = verified(types=("Dice_Count",), per_type=1)[0]
    staff = get_user_model().objects.create_superuser(username="boss", password="a long pass phrase")
    study = study_create(name="csp", split="test", puzzles_per_annotator=1)
    attempt = attempt_start(participant=participant_for_user(user=staff), puzzle=puzzle)

    async def check(site: str) -> list[str]:
        request = RequestFactory().get("/", secure=True, HTTP_HOST=site.split("//")[1])
        policy = content_security_policy(request)
        refused: list[str] = []

        async def with_policy(route):
            response = await route.fetch()
            await route.fulfill(response=response, headers={**response.headers, "content-security-policy": policy})

        def watch(page, where):
            page.on("console", lambda m: refused.append(f"{where}: {m.text}") if "Security Policy" in m.text else None)
            page.on("pageerror", lambda e: refused.append(f"{where}: {e}"))

        async with async_playwright() as playwright:
            # The policy is added to responses on their way to the page (route.fulfill); Chromium
            # then takes the pages for public ones and would keep their sockets off 127.0.0.1.
            args = [
                a + ",LocalNetworkAccessChecks" if a.startswith("--disable-features=") else a for a in CHROMIUM_ARGS
            ]
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=args)
            anonymous = await browser.new_context(base_url=site)
            await anonymous.route("**/*", with_policy)
            page = await anonymous.new_page()
            watch(page, "sign-in")
            for login, landing in (("/admin/login/", "Site administration"), ("/accounts/login/", "Puzzle bank")):
                await anonymous.clear_cookies()
                await page.goto(login)
                await page.fill("#id_username", "boss")
                await page.fill("#id_password", "a long pass phrase")
                await page.click("[type=submit]")
                await page.wait_for_selector(f"text={landing}")
            await anonymous.clear_cookies()
            await page.goto(f"/s/{study.token}/")
            await page.goto("/no/such/page/")
            await page.wait_for_selector("text=Page not found")

            # Signing in above re-hashed the password at the server's own cost (tests/passwords.py):
            # the staff session is made for the user as stored now.
            await sync_to_async(staff.refresh_from_db)()
            context = await signed_in_context(browser, site, staff)
            await context.route("**/*", with_policy)
            page = await context.new_page()
            watch(page, "staff")
            for address in (
                "/",
                "/studies/",
                "/studies/new/",
                f"/studies/{study.pk}/annotators/",
                "/review/",
                f"/review/{puzzle.uid}/",
                "/admin/",
                "/admin/auth/user/",
                f"/admin/auth/user/{staff.pk}/change/",
                "/admin/auth/user/add/",
                "/admin/puzzles/puzzle/",
            ):
                response = await page.goto(address)
                assert response.status == 200, address
                assert response.headers["content-security-policy"] == policy
            await page.goto("/dashboard/")
            await page.wait_for_selector('#dash-state[data-state="live"]')
            await page.goto(f"/play/{attempt.uid}/")
            await page.wait_for_selector(READY.format(uid=attempt.uid), state="attached")
            await page.goto("/admin/auth/user/add/")  # the admin's own scripts: the password toggles
            await page.fill("#id_username", "someone")
            await page.click("[type=submit][name=_save]")
            await page.wait_for_selector(".errornote, .errorlist")
            await browser.close()
        return refused

    with live_server() as site:
        refused = asyncio.run(check(site))
    assert refused == []


def test_templates_extend_the_site_page_so_errors_look_like_the_site():
    for name in ("400.html", "403.html", "404.html", "500.html"):
        text = (TEMPLATES / name).read_text()
        assert text.startswith('{% extends "base.html" %}'), name
        assert "exception" not in text and "request_path" not in text, name
