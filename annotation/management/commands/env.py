"""`python manage.py env serve|token`: the arena as a training environment (docs/environment.md).

serve  OpenEnv's protocol on --port, trainers' tokens in the path: /<token>/ws and the HTTP endpoints
token  a new token for a client and the datasets it may use; prints the key, keeps only its hash
trained  which puzzles of an evaluation run were trained on (played by an environment episode)
"""

import asyncio
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from annotation.agents.players import player_start, rollouts_abandoned_fail
from annotation.agents.server import live_server
from annotation.environment.contamination import run_contamination
from annotation.environment.server import IDLE_TIMEOUT_S
from annotation.environment.tokens import SESSIONS_DEFAULT, TokenError, studied_puzzles, token_create
from annotation.models import AgentRun
from puzzles.models import Puzzle

# A frame carries a 1280x1080 PNG in base64 (under 2 MiB for the busiest page); daphne's limit is
# one for both directions.
MESSAGE_MAX_BYTES = 16 * 1024 * 1024


class Command(BaseCommand):
    help = "Serve the arena as an OpenEnv training environment; make trainers' tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        serve = actions.add_parser("serve", help="serve OpenEnv's protocol (until stopped)")
        serve.add_argument("--port", type=int, required=True)
        serve.add_argument("--host", default="127.0.0.1")
        serve.add_argument("--sessions", type=int, default=4, help="concurrent episodes (browser contexts) at most")
        serve.add_argument(
            "--idle-timeout", type=float, default=IDLE_TIMEOUT_S, help="seconds without a frame before a session closes"
        )
        token = actions.add_parser("token", help="a new token; its key is printed once")
        token.add_argument("name", help="the client (names its runs: 'env NAME: CHECKPOINT')")
        token.add_argument("--datasets", nargs="+", required=True, help="dataset labels it may draw from")
        token.add_argument("--splits", nargs="+", default=["train"], help="splits it may draw from (default: train)")
        token.add_argument(
            "--sessions", type=int, default=SESSIONS_DEFAULT, help="its sessions open at once on one server at most"
        )
        trained = actions.add_parser("trained", help="an evaluation run's puzzles that were trained on")
        trained.add_argument("run", help="the run's name (agent runs lists them)")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "trained":
            return self._trained(options["run"])
        if action == "token":
            return self._token(options["name"], options["datasets"], options["splits"], options["sessions"])
        if options["sessions"] < 1 or options["idle_timeout"] <= 0:
            raise CommandError("--sessions must be at least 1 and --idle-timeout positive")
        self._serve(options["host"], options["port"], options["sessions"], options["idle_timeout"])

    def _token(self, name: str, datasets: list[str], splits: list[str], sessions: int) -> None:
        try:
            token, key = token_create(name=name, datasets=datasets, splits=splits, max_sessions=sessions)
        except TokenError as error:
            raise CommandError(str(error)) from None
        studied = studied_puzzles(token)
        if studied:  # said first, so that nobody misses it above the key
            uses = ", ".join(f"{study!r} ({count})" for study, count in sorted(studied.items()))
            self.stderr.write(
                f"warning: this token reaches puzzles that studies use: {uses}. An episode on one marks it trained"
                " on, and those studies' reports then say their agent comparisons on it are contaminated."
            )
        said = f"{', '.join(token.datasets)}, split {', '.join(token.splits)}, {token.max_sessions} sessions"
        self.stdout.write(f"token {token.name} for {said} (shown once; keep it):")
        self.stdout.write(key)

    def _trained(self, name: str) -> None:
        run = AgentRun.objects.filter(name=name).first()
        if run is None:
            raise CommandError(f"no run named {name!r}")
        total, marked = run_contamination(run)
        uids = dict(Puzzle.objects.filter(pk__in=marked).values_list("pk", "uid"))
        for puzzle_id, seen in sorted(marked.items()):
            since = f"{seen.first:%Y-%m-%d %H:%M}" if seen.first else "?"
            self.stdout.write(f"{uids[puzzle_id]}  trained on since {since} by {', '.join(seen.runs)}")
        self.stdout.write(f"trained: {len(marked)} of {total} puzzles of {name!r} were trained on")

    def _serve(self, host: str, port: int, sessions: int, idle_timeout: float) -> None:
        from daphne.server import Server  # type: ignore[import-untyped]  # installs Twisted's asyncio reactor: only when serving
        from twisted.internet import defer, reactor

        from annotation.environment.server import EnvServer

        # This server's episodes are held in its name; those of servers gone are failed now.
        player = player_start("env serve")
        rollouts_abandoned_fail()
        connection.close()  # the event loop's calls take theirs in their own thread
        with live_server() as page_base:
            app = EnvServer(
                page_base=page_base, max_sessions=sessions, idle_timeout_s=idle_timeout, player_id=player.pk
            )
            reactor.callWhenRunning(lambda: asyncio.ensure_future(app.keep_alive()))

            def close_browser() -> defer.Deferred:
                return defer.Deferred.fromFuture(asyncio.ensure_future(app.close()))

            # Chromium closed before the reactor stops (Twisted waits on the Deferred), and so
            # before the page server behind it is stopped. zope interface methods are declared
            # without self, so mypy reads the arguments shifted.
            reactor.addSystemEventTrigger("before", "shutdown", close_browser)  # type: ignore[arg-type]
            where = f"http://{host}:{port}/<token>/"
            self.stdout.write(f"env: serving on {where} (pages from {page_base}), {sessions} sessions at most")
            self.stdout.flush()
            Server(
                application=app,
                endpoints=[f"tcp:port={port}:interface={host}"],
                websocket_max_message_size=MESSAGE_MAX_BYTES,
                websocket_max_frame_size=MESSAGE_MAX_BYTES,
                verbosity=0,
            ).run()
