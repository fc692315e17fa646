"""Memory under hostile input, measured from outside the processes (issue 26's figures):

- The import: peak memory of `manage.py puzzles import-captchaarena --workers 1` on a folder
  holding one good image and a 9600x9600 PNG (110 KB on disk, 92 Mpx; refused from its header,
  puzzles/contained.py), beside the same command on the good image alone. Goal: under 300 MB.
- A web process as deployed (daphne, annotation/agents/server.py's command): its peak memory
  (VmHWM) after a 1 MiB POST, a 64 MiB POST with its length declared and a 64 MiB chunked one,
  and the body bytes each client sent before it was answered. Goal: 64 MiB costs what 1 MiB does.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a fresh database> python bench/bounds.py

Uses a throwaway SQLite database unless DATABASE_URL is set.
"""

import contextlib
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from _setup import ROOT, django_for_bench

scratch = django_for_bench()

from PIL import Image  # noqa: E402

from annotation.agents.server import web_process  # noqa: E402

GOAL_IMPORT_MB = 300
MIB = 1024 * 1024
CHUNK = 64 * 1024


# The command's own peak (VmHWM, of the program it runs), printed as it exits. Not its rusage: Linux
# carries a process's peak across fork and exec, so that would report this bench's own.
PEAK_AT_EXIT = (
    "import atexit, re, runpy, sys; "
    "atexit.register(lambda: print('peak', re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1])); "
    "sys.argv = ['manage.py', *sys.argv[1:]]; runpy.run_path('manage.py', run_name='__main__')"
)


def import_peak_kib(folder: Path) -> int:
    """Peak memory of the import command; what it printed is shown indented."""
    command = [sys.executable, "-c", PEAK_AT_EXIT, "puzzles", "import-captchaarena", "--workers", "1"]
    command += ["--name", f"bounds-{folder.parent.name}", str(folder)]
    run = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True)
    lines = run.stdout.strip().splitlines()
    peak = next(int(line.split()[1]) for line in lines if line.startswith("peak "))
    print("\n".join(f"    | {line}" for line in lines if not line.startswith("peak ")))
    return peak


def dataset(root: Path, *, with_huge: bool) -> Path:
    """A Test split with one Dice_Count puzzle, and the 9600x9600 one when asked."""
    folder = root / "Test" / "Dice_Count"
    folder.mkdir(parents=True)
    Image.new("RGB", (200, 100), 90).save(folder / "good.png")
    truth = {"good.png": {"sum": 7}}
    if with_huge:
        Image.new("L", (9600, 9600), 90).save(folder / "huge.png")
        truth["huge.png"] = {"sum": 6}
    (folder / "ground_truth.json").write_text(json.dumps(truth))
    return root / "Test"


def import_figures() -> None:
    print("import, one process (--workers 1): peak memory (VmHWM)")
    for with_huge in (False, True):
        what = "good image + 9600x9600 PNG" if with_huge else "good image alone"
        print(f"  {what}:")
        peak = import_peak_kib(dataset(scratch / f"data-{with_huge}", with_huge=with_huge))
        verdict = f"  (goal under {GOAL_IMPORT_MB} MB)" if with_huge else ""
        print(f"  = {peak:,} kB, {peak / 1024:.1f} MiB{verdict}")


def peak_kib(pid: int) -> int:
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())[1])


def post(port: int, size: int, *, chunked: bool) -> tuple[int, str]:
    """Sends up to size body bytes in 64 KiB pieces, stopping when the server answers (as curl
    does). Returns the body bytes sent and the answer's status line."""
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
    head = f"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{framing}\r\n\r\n"
    piece = b"%x\r\n%s\r\n" % (CHUNK, b"a" * CHUNK) if chunked else b"a" * CHUNK
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=120) as client:
        client.sendall(head.encode())
        while sent < size and not select.select([client], [], [], 0)[0]:
            try:
                client.sendall(piece)
            except OSError:  # cut off: the answer is waiting
                break
            sent += CHUNK
        if chunked and sent >= size:
            client.sendall(b"0\r\n\r\n")
        answer = b""
        with contextlib.suppress(OSError):
            while b"\r\n" not in answer and (data := client.recv(65536)):
                answer += data
    return sent, answer.split(b"\r\n", 1)[0].decode()


def web_figures() -> None:
    print("web process (daphne as deployed, body limit 1 MiB): peak memory VmHWM after each request")
    os.environ.pop("ARENA_MAX_BODY_BYTES", None)  # the deployed default, 1 MiB
    with web_process() as (url, process):
        port, pid = urlsplit(url).port, process.pid
        post(port, 0, chunked=False)  # the site's first request loads what every later one uses
        print(f"  {'after one empty POST':28} {peak_kib(pid):>9,} kB")
        requests = [("1 MiB POST", MIB, False), ("64 MiB POST", 64 * MIB, False), ("64 MiB chunked", 64 * MIB, True)]
        for name, size, chunked in requests:
            sent, status = post(port, size, chunked=chunked)
            print(f"  {name:28} {peak_kib(pid):>9,} kB   body sent before the answer {sent:>10,} B   {status}")


if __name__ == "__main__":
    print(f"load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        import_figures()
        web_figures()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
