"""Settings. Everything that differs between machines comes from the environment.

With no environment at all the platform runs embedded: SQLite, an in-memory channel
layer and Celery tasks run inline. DATABASE_URL and REDIS_URL switch to PostgreSQL and Redis.
"""

import os
import secrets
import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from .env import (
    POOL_MAX,
    POOL_MIN,
    POOL_TIMEOUT_S,
    database_from_url,
    env_bool,
    env_int,
    env_list,
    env_str,
    sqlite_database,
)
from .secret_key import secret_key
from .static_version import app_static_folders, static_version

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("ARENA_VAR_DIR", str(BASE_DIR / "var")))

# Type checking (mypy's Django plugin) imports these settings and serves nothing: throwaway secrets.
if "mypy" in sys.modules:
    for _name in ("SECRET_KEY", "PUZZLE_BANK_SECRET"):
        os.environ.setdefault(_name, f"typecheck-only-{secrets.token_urlsafe(40)}")

# Production by default: `make run` sets DEBUG=true for local use.
DEBUG = env_bool("DEBUG", default=False)
# Required outside DEBUG (and refused when Django's deploy check calls it weak); with DEBUG on,
# made once and kept in VAR_DIR; a pytest run signs with a throwaway key of its own, which the
# page servers it starts get through their environment (arena_site/secret_key.py).
SECRET_KEY = secret_key(debug=DEBUG, var_dir=VAR_DIR)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
# Origins (scheme://host[:port]) other than the site's own that may post forms and open sockets.
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
RUNNING_IN_CI = env_bool("CI", default=False)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "axes",
    "puzzles",
    "puzzles.jobs",  # heavy work in chunks on the workers (docs/jobs.md)
    "annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "arena_site.middleware.ContentSecurityPolicyMiddleware",
    "arena_site.middleware.ControlCharactersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "arena_site.errors.DatabaseUnavailableMiddleware",  # 503 "database unavailable", not the 500 page
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a lockout into its page
]

ROOT_URLCONF = "arena_site.urls"
ASGI_APPLICATION = "arena_site.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    # PostgreSQL: a connection pool per process (arena_site/env.py), sized from the environment.
    DATABASES = {
        "default": database_from_url(
            DATABASE_URL,
            pool=env_bool("ARENA_DB_POOL", default=True),
            pool_min=env_int("ARENA_DB_POOL_MIN", POOL_MIN),
            pool_max=env_int("ARENA_DB_POOL_MAX", POOL_MAX),
            pool_timeout=env_int("ARENA_DB_POOL_TIMEOUT", POOL_TIMEOUT_S),
        )
    }
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            **sqlite_database(VAR_DIR / "arena.sqlite3"),
            # A file, not memory, so a live page server in a child process sees the test data.
            "TEST": {"NAME": str(VAR_DIR / "test.sqlite3")},
        }
    }
if RUNNING_IN_CI and not DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # CI must prove the PostgreSQL path; silently falling back to SQLite would hide breakage.
    raise ImproperlyConfigured("CI=true requires DATABASE_URL to point at PostgreSQL")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    # Shared by every web process: rate limits hold across the whole site. A Redis that stops
    # answering costs a request 2 s, not a hang (the callers fail open: studies/access.py).
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=False)
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_RESULT_BACKEND = "cache+memory://"
    CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A task taken by a worker that dies without a word (killed, its machine gone) goes back on the
# Redis queue after this long; every delivery of a job's chunk finishes well within it (docs/jobs.md).
TASK_VISIBILITY_TIMEOUT_S = env_int("ARENA_TASK_VISIBILITY_TIMEOUT_S", 300)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": TASK_VISIBILITY_TIMEOUT_S,
    # Each worker looks for such tasks every tenth of the timeout, so one is back within 1.1 times
    # it. kombu's own default looks every 100 s (every 10th tick of 10 s), however short the timeout.
    "unacked_restore_interval": max(1, TASK_VISIBILITY_TIMEOUT_S // 10),
    "unacked_restore_throttle": 1,
}
# A worker silent this long on a chunk it holds is taken for dead: another delivery takes the chunk over.
ARENA_JOB_LEASE_S = env_int("ARENA_JOB_LEASE_S", 60)
# The periodic work, sent by the `beat` service (docker-compose.yml: one beat, any number of
# workers). A submit that waits behind batches that never came is scored by the socket that
# carried it, by any later request for its attempt, and by this sweep (annotation/tasks.py), which
# scores those whose page is gone: within GAP_WAIT_S + GAP_SWEEP_S and a worker's turn. A sweep not
# started within GAP_SWEEP_S is dropped (expires): the next does the same work. With tasks run
# inline (no broker, so no beat) the web process sweeps on its own (annotation/live/intake.py).
GAP_SWEEP_S = 5.0
# Rollouts left open by a killed `env serve` or `agent run` are failed, with the reason, by this
# sweep too (annotation/agents/players.py), should no env serve be left running to do it.
ROLLOUT_SWEEP_S = 30.0
# A job's chunk whose task may be lost (its holder silent past the lease, or sent to a Redis that
# restarted since) is sent again by this sweep, every quarter lease (puzzles/jobs/runs.py, docs/jobs.md).
JOB_RESEND_S = max(1.0, ARENA_JOB_LEASE_S / 4)
CELERY_BEAT_SCHEDULE = {
    "resolve-gaps": {"task": "annotation.resolve_gaps", "schedule": GAP_SWEEP_S, "options": {"expires": GAP_SWEEP_S}},
    "abandoned-rollouts": {
        "task": "annotation.rollouts_abandoned_fail",
        "schedule": ROLLOUT_SWEEP_S,
        "options": {"expires": ROLLOUT_SWEEP_S},
    },
    "resend-chunks": {"task": "puzzles.jobs_resend", "schedule": JOB_RESEND_S, "options": {"expires": JOB_RESEND_S}},
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATICFILES_DIRS = [BASE_DIR / "static"]
# A new path whenever any file changes, ours or an app's (arena_site/static_version.py).
STATIC_URL = f"static/{static_version([*STATICFILES_DIRS, *app_static_folders(INSTALLED_APPS)])}/"
STATIC_ROOT = VAR_DIR / "staticfiles"
# Public puzzle images only; truth (including masks) lives in the database, never here.
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
PRIVATE_ROOT = Path(env_str("PRIVATE_ROOT", str(VAR_DIR / "private")))  # never served

# A puzzle is a pure function of (type, split, index, bank secret). The secret is per deployment,
# never a constant in the source (anyone with the code could rebuild the bank): required outside
# DEBUG, made once and kept in VAR_DIR with DEBUG on. arena_site/bank_secret.py reads and checks it.
from .bank_secret import bank_secret  # noqa: E402  (beside the one setting it serves)

PUZZLE_BANK_SECRET = bank_secret(debug=DEBUG, var_dir=VAR_DIR, base_dir=BASE_DIR)
# Whether a person sees "correct / not correct" after submitting (never the answer itself).
ARENA_SHOW_VERDICT = env_bool("ARENA_SHOW_VERDICT", default=False)
# Hosted benchmarks (docs/hosted.md): each attempt's page is served through our proxy at its own
# host, a-<attempt key>.<ARENA_HOSTED_DOMAIN> (a wildcard DNS name and certificate of a domain of its
# own in production, never a subdomain of the site's; *.localhost needs neither). Pinned copies of
# the off-origin files their pages load are kept in ARENA_HOSTED_ASSETS.
ARENA_HOSTED_DOMAIN = env_str("ARENA_HOSTED_DOMAIN", "localhost").lower().strip(".")
ARENA_HOSTED_ASSETS = Path(env_str("ARENA_HOSTED_ASSETS", str(VAR_DIR / "hosted-assets")))
# Anonymous joins of one study from one client address per hour (invite links are public).
ARENA_JOINS_PER_HOUR = env_int("ARENA_JOINS_PER_HOUR", 30)
# Reverse proxies in front of the site: the client's address is that many hops back in
# X-Forwarded-For (0: the connection's own address).
ARENA_PROXY_HOPS = env_int("ARENA_PROXY_HOPS", 0)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "puzzles:home"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# --- Hardening: error pages, HTTPS, bounds, login throttling ---------------------------------
# Error pages (even DEBUG's) never show connection URLs, passwords or keys (arena_site/errors.py).
DEFAULT_EXCEPTION_REPORTER_FILTER = "arena_site.errors.SecretsHiddenFilter"
DEFAULT_EXCEPTION_REPORTER = "arena_site.errors.SecretsHiddenReporter"

# Behind a proxy that terminates HTTPS and says so in X-Forwarded-Proto (deploy/nginx.conf):
# cookies only over HTTPS, and browsers told to keep to HTTPS (HSTS).
ARENA_BEHIND_HTTPS_PROXY = env_bool("ARENA_BEHIND_HTTPS_PROXY", default=False)
if ARENA_BEHIND_HTTPS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = ARENA_BEHIND_HTTPS_PROXY
SECURE_HSTS_SECONDS = env_int("ARENA_HSTS_SECONDS", 31536000) if ARENA_BEHIND_HTTPS_PROXY else 0
# Names below the site's own host are the site's too: HTTPS for them as well.
SECURE_HSTS_INCLUDE_SUBDOMAINS = ARENA_BEHIND_HTTPS_PROXY
if ARENA_BEHIND_HTTPS_PROXY:
    # What `manage.py check --deploy` still asks for, decided elsewhere: the proxy sends plain HTTP
    # to HTTPS (deploy/nginx.conf; the site itself redirecting would also send the replay page
    # servers, plain HTTP on 127.0.0.1, away), and joining browsers' HSTS preload list is the
    # domain owner's decision, made at hstspreload.org, not a default of ours.
    SILENCED_SYSTEM_CHECKS = ["security.W008", "security.W021"]
SESSION_COOKIE_HTTPONLY = CSRF_COOKIE_HTTPONLY = True  # pages get the CSRF token in their data, not a cookie
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = "Lax"

# Request bodies above this are refused with 413 before the site reads them (arena_site/bounds.py);
# the largest legitimate one is an event batch (annotation/live/frames.py, MAX_FRAME_BYTES).
ARENA_MAX_BODY_BYTES = env_int("ARENA_MAX_BODY_BYTES", 1024 * 1024)

# Staff sign-in: 5 failures for one name from one address lock that pair out for an hour; a
# success clears the count (django-axes; the admin's login and /accounts/login/ alike).
AUTHENTICATION_BACKENDS = [
    "arena_site.auth.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("ARENA_LOGIN_FAILURES", 5)
AXES_COOLOFF_TIME = env_int("ARENA_LOGIN_LOCKOUT_HOURS", 1)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "arena_site.auth.client_ip"
AXES_LOCKOUT_TEMPLATE = "registration/locked.html"
AXES_VERBOSE = False
# Failures are kept (they are the count); successful sign-ins, annotators' included, are not
# logged with their address and browser.
AXES_DISABLE_ACCESS_LOG = True
LOGGING["loggers"] = {"axes": {"level": "WARNING"}}  # lockouts, not every sign-in
