import os
import time

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")

app = Celery("arena_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The periodic work, run by the `beat` service (docker-compose.yml: one beat, any number of
# workers). A submit that waits behind batches that never came is scored by the socket that
# carried it; this sweep scores those whose page is gone (a socket that died, the HTTP fallback).
# Every GAP_SWEEP_S (5 s: a gapped submit is scored within
# GAP_WAIT_S + 5 s and a worker's turn). A sweep not started within that is dropped (expires):
# the next one does the same work. With tasks run inline (no broker, so no beat) the web process
# sweeps on its own, on the next frame a page sends (annotation/live/intake.py, sweep_if_due).
GAP_SWEEP_S = 5.0
app.conf.beat_schedule = {
    "resolve-gaps": {"task": "annotation.resolve_gaps", "schedule": GAP_SWEEP_S, "options": {"expires": GAP_SWEEP_S}},
}


@app.task(name="annotation.resolve_gaps", ignore_result=True)
def resolve_gaps() -> int:
    """The sweep of `python manage.py resolve_gaps`, on a worker."""
    from annotation.live.intake import attempts_resolve_gaps  # the app registry is ready by now

    return attempts_resolve_gaps(now_ms=time.time() * 1000)
