"""`python manage.py resolve_gaps`: score every submit that has waited too long behind batches that
never arrived (the socket that would have done it is gone: HTTP fallback, a server restart)."""

import time
from typing import Any

from django.core.management.base import BaseCommand

from annotation.live.intake import GAP_WAIT_S, attempts_resolve_gaps


class Command(BaseCommand):
    help = f"Score attempts whose submit has waited over {GAP_WAIT_S:g} s behind missing batches."

    def handle(self, *args: Any, **options: Any) -> None:
        scored = attempts_resolve_gaps(now_ms=time.time() * 1000)
        self.stdout.write(f"resolve_gaps: {scored} attempt(s) scored on the batches they have")
