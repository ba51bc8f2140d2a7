"""infra.processes.cpu_seconds: a live process's CPU time from /proc grows as it works; a process that is gone
has none."""

import subprocess
import sys
import time

from infra.processes import cpu_seconds


def test_cpu_seconds_of_a_working_process_and_of_one_gone():
    child = subprocess.Popen([sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"
                                                    "while time.process_time() < end: pass\ntime.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while (cpu := cpu_seconds(child.pid)) is not None and cpu < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cpu is not None and 0.3 <= cpu < 5
    finally:
        child.kill()
        child.wait()
    assert cpu_seconds(child.pid) is None
