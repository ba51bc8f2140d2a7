"""A worker's stop that hangs ends the process by its deadline; one that ends in time leaves the process be."""

import subprocess
import sys
import textwrap

from tests.conftest import ROOT

# A stand-in for Mode's Worker: its stop is asked for through `_schedule_shutdown`, as signals ask for it.
PROCESS = textwrap.dedent("""
    import signal, sys, time
    from streams.stop_deadline import graceful_stop_within

    class Worker:
        def _schedule_shutdown(self, signal_received):
            print("stop asked", flush=True)

    worker = Worker()
    with graceful_stop_within(worker, 0.5):
        worker._schedule_shutdown(signal.SIGTERM)
        if sys.argv[1] == "hangs":
            time.sleep(30)
    time.sleep(1.0)  # past the deadline: a stop that ended in time cancelled it
    print("ran on", flush=True)
""")


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROCESS, mode], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_a_stop_that_hangs_ends_the_process_at_its_deadline():
    result = _run("hangs")
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["stop asked"]
    assert "graceful stop did not end within 0.5 s" in result.stderr


def test_a_stop_that_ends_in_time_lets_the_process_run_on():
    result = _run("ends")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["stop asked", "ran on"]
