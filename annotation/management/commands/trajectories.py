"""`python manage.py trajectories export --study S --out DIR`: people's attempts as trajectories.

Each submitted human attempt of the study, in the published training layout (the agent export's
shape), its screenshots re-rendered by replaying the stored events on the live page in headless
Chromium, with the continuous pointer path beside it (docs/datasets.md). Excluded annotators and
attempts without input evidence are left out unless asked. --reason-with fills each step's
reasoning with a model, judged by a second call (off by default).

With --on-workers the attempts go to the Celery workers in chunks (docs/jobs.md) and the folder
is one under PRIVATE_ROOT, which the workers and this command both reach.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.agents.prompts import TOOLS_PROMPT
from annotation.management.common import find_study
from annotation.models import Study
from puzzles.progress import Progress

if TYPE_CHECKING:  # imported when asked for: the reasoner pulls in the model client
    from annotation.datasets.reasoning import Reasoner


class Command(BaseCommand):
    help = "Export people's attempts as screenshot-action trajectories with their pointer paths."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        export = actions.add_parser("export", help="a study's submitted human attempts")
        export.add_argument("--study", required=True, help="study name or id")
        export.add_argument("--out", required=True, help="folder to write (made if missing)")
        export.add_argument("--with-excluded", action="store_true", help="excluded annotators' attempts too")
        export.add_argument("--with-no-input", action="store_true", help="attempts without input evidence too")
        export.add_argument("--workers", type=int, default=3, help="pages rendering in parallel")
        export.add_argument("--limit", type=int, help="N attempts only, taken a type at a time (a sample)")
        export.add_argument("--system-prompt-file", help="the system turn of sft_data.json (default: ours)")
        export.add_argument("--reason-with", metavar="BASE_URL", help="an OpenAI-compatible server, e.g. .../v1")
        export.add_argument("--model", help="the model for --reason-with")
        export.add_argument("--judge-model", help="a second model to judge (default: the same)")
        export.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable with the key")
        export.add_argument(
            "--on-workers",
            action="store_true",
            help="render on the Celery workers as a job of chunks (--out then a folder under PRIVATE_ROOT); "
            "its progress here and on the staff Jobs page; without a broker the chunks run here (docs/jobs.md)",
        )
        export.add_argument("--chunk-size", type=int, help="attempts a chunk with --on-workers (default: 10)")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        getattr(self, f"do_{action}")(**options)

    def do_export(
        self, *, study: str, out: str, workers: int, limit: int | None, system_prompt_file: str | None, **options: Any
    ) -> None:
        from annotation.datasets.trajectories import study_attempts, trajectories_export

        found = find_study(study)
        prompt = Path(system_prompt_file).read_text(encoding="utf-8") if system_prompt_file else TOOLS_PROMPT
        if options["on_workers"]:
            return self._export_on_workers(found, out, workers, limit, prompt, options)
        reasoner = _reasoner(options)
        selection = study_attempts(
            found, with_excluded=options["with_excluded"], with_no_input=options["with_no_input"]
        )
        total = selection.attempts.count() if limit is None else min(limit, selection.attempts.count())
        progress = Progress(total, "trajectories", stream=cast(TextIO, self.stderr._out))
        record = trajectories_export(
            found,
            Path(out),
            with_excluded=options["with_excluded"],
            with_no_input=options["with_no_input"],
            workers=workers,
            limit=limit,
            system_prompt=prompt,
            reasoner=reasoner,
            on_result=lambda _: progress.advance(),
        )
        progress.close()
        left = record["left_out"]
        rate = 60 * record["written"] / record["seconds"] if record["seconds"] else 0.0
        self.stdout.write(
            f"{record['written']} of {record['attempts']} attempts to {out} in {record['seconds']:.1f} s "
            f"({rate:.0f} a minute); the replay reached the person's answer in {record['replay_same_answer']}; "
            f"left out: {left['excluded_annotators']} of excluded annotators, {left['no_input']} without input"
        )
        for failed in record["failed"]:
            self.stderr.write(f"attempt {failed['attempt']} not written: {failed['problem']}")

    def _export_on_workers(
        self, study: Study, out: str, pages: int, limit: int | None, prompt: str, options: dict[str, Any]
    ) -> None:
        from annotation.tasks import TRAJECTORIES_CHUNK, export_folder, trajectories_job_start
        from puzzles.jobs.runs import job_ended_done, job_failures, job_watch, started_by_shell

        if options["reason_with"]:
            raise CommandError("--reason-with runs here only: drop --on-workers to fill reasoning with a model")
        try:
            job = trajectories_job_start(
                study,
                out,
                with_excluded=options["with_excluded"],
                with_no_input=options["with_no_input"],
                limit=limit,
                system_prompt=prompt,
                pages=pages,
                started_by=started_by_shell(),
                chunk_size=options["chunk_size"] or TRAJECTORIES_CHUNK,
            )
        except ValueError as error:  # no attempt to export, a folder outside PRIVATE_ROOT, a bad chunk size
            raise CommandError(str(error)) from None
        job = job_watch(job, "trajectories", self.stdout, self.stderr)
        for line in job_failures(job):
            self.stdout.write(line)
        folder = export_folder(job.params["out"])
        self.stdout.write(f"{job.done - job.failed} of {job.total} attempts to {folder} (job {job.pk} {job.state})")
        job_ended_done(job)


def _reasoner(options: dict[str, Any]) -> Reasoner | None:
    if not options["reason_with"]:
        return None
    if not options["model"]:
        raise CommandError("--reason-with needs --model")
    from annotation.datasets.reasoning import Reasoner

    return Reasoner(
        base_url=options["reason_with"],
        model=options["model"],
        judge_model=options["judge_model"] or options["model"],
        api_key=os.environ.get(options["api_key_env"], ""),
    )
