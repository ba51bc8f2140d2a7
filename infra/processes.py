"""Small helpers about processes this project started."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """True while a process with this id exists (zombies included)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a live process so far (Linux /proc); None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def die_with_parent() -> None:
    """In the child, before exec: ask Linux to send SIGTERM when the parent dies, even by SIGKILL,
    so a killed CLI never leaves its servers running (a no-op elsewhere)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@contextmanager
def serve_in_child(argv: list[str], env: dict[str, str] | None = None, timeout: float = 60.0) -> Iterator:
    """Run `sourcewatch ARGV --json` (a server) in a child process for the duration of the block.

    Yields the JSON object the server prints as its first line once it is serving; stops it after.
    """
    process = subprocess.Popen([sys.executable, "-m", "streams.cli", *argv, "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=die_with_parent)
    try:
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        line = process.stdout.readline() if ready else ""
        if not line:
            process.terminate()
            _, errors = process.communicate(timeout=10)
            raise RuntimeError(f"sourcewatch {argv[0]} did not start: {errors.strip()[-2000:] or 'timed out'}")
        yield json.loads(line)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def run_to_completion(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> dict:
    """Run `sourcewatch ARGV --json` in a child process to its end; the JSON object it prints last.

    For work that needs a worker of its own after this process already ran one (a Faust app runs one
    worker per process)."""
    try:
        done = subprocess.run([sys.executable, "-m", "streams.cli", *argv, "--json"], capture_output=True,
                              text=True, timeout=timeout, env=env, preexec_fn=die_with_parent)
    except subprocess.TimeoutExpired as error:
        errors = error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes) else (error.stderr or "")
        raise RuntimeError(f"sourcewatch {argv[0]} ran past {timeout:.0f} s (its log: {_keep_log(argv, errors)}): "
                           f"{errors.strip()[-2000:]}") from error
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"sourcewatch {argv[0]} failed (exit {done.returncode}; its log: "
                           f"{_keep_log(argv, done.stderr)}): {done.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])


def _keep_log(argv: list[str], errors: str) -> str:
    """The child's whole log in a file (the error message holds only its end), and the file's path."""
    with tempfile.NamedTemporaryFile("w", prefix=f"sourcewatch-{argv[0]}-{int(time.time())}-", suffix=".log",
                                     delete=False, encoding="utf-8") as handle:
        handle.write(errors)
    return handle.name

