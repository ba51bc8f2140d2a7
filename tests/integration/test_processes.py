"""A server started by serve_in_child stops with its parent, even when the parent is killed outright."""

import os
import signal
import subprocess
import sys
import time

from tests.conftest import ROOT

PARENT = """
import sys, time
from infra.processes import serve_in_child
with serve_in_child(["serve-sites", sys.argv[1]]) as homepages:
    print(list(homepages.values())[0], flush=True)
    time.sleep(120)
"""


def test_a_killed_parent_leaves_no_server_behind(tmp_path):
    (tmp_path / "index.html").write_text("<p>hi</p>")
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT)
    homepage = parent.stdout.readline().strip()
    assert homepage.startswith("http://127.0.0.1:")
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        result = subprocess.run(["pgrep", "-f", f"serve-sites {tmp_path}"], capture_output=True)
        if result.returncode == 1:  # no such process any more
            break
        time.sleep(0.2)
    assert result.returncode == 1, "the serve-sites child outlived its killed parent"
