"""A processing worker drops the pages of torch's GPU libraries from memory where there is no GPU
(streams.gpu_libraries), and only from read-only mappings that hold no page of their own."""

import json
import subprocess
import sys

import pytest

from streams.gpu_libraries import droppable, mappings

SMAPS = """\
7f0000000000-7f0000400000 r-xp 00000000 00:2a 123  /venv/site-packages/nvidia/cu13/lib/libcublasLt.so.13
Size:               4096 kB
Rss:                3072 kB
Private_Clean:      3072 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000400000-7f0000500000 rw-p 00400000 00:2a 123  /venv/site-packages/nvidia/cu13/lib/libcublasLt.so.13
Rss:                 512 kB
Private_Dirty:       512 kB
Anonymous:           512 kB
7f1000000000-7f1000100000 r-xp 00000000 00:2a 124  /venv/site-packages/torch/lib/libtorch_cpu.so
Rss:                 900 kB
Anonymous:             0 kB
7f2000000000-7f2000100000 r-xp 00000000 00:2a 125  /venv/site-packages/torch/lib/libtorch_cuda.so
Rss:                 800 kB
Anonymous:             0 kB
7f3000000000-7f3000100000 rw-p 00000000 00:00 0
Rss:                1024 kB
Anonymous:          1024 kB
7f4000000000-7f4000001000 r--p 00000000 00:2a 126  /venv/site-packages/nvidia/cu13/include/notes.txt
Rss:                   4 kB
Anonymous:             0 kB
"""


def test_smaps_are_read_as_file_mappings_with_their_own_pages():
    found = mappings(SMAPS)
    assert [(m.path.rsplit("/", 1)[1], m.writable, m.resident_kb, m.own_kb) for m in found] == [
        ("libcublasLt.so.13", False, 3072, 0), ("libcublasLt.so.13", True, 512, 1024),
        ("libtorch_cpu.so", False, 900, 0), ("libtorch_cuda.so", False, 800, 0), ("notes.txt", False, 4, 0)]
    assert found[0].start == 0x7F0000000000 and found[0].end == 0x7F0000400000


def test_only_the_gpu_libraries_read_only_pages_are_dropped():
    assert [m.of_gpu_library for m in mappings(SMAPS)] == [True, True, False, True, False]
    # The written data segment would lose its relocated pages; torch's CPU library is in use.
    assert [droppable(m) for m in mappings(SMAPS)] == [True, False, False, True, False]


PROBE = """
import json
import torch
from streams.gpu_libraries import droppable, mappings, release_gpu_code

def gpu_resident():
    with open("/proc/self/smaps") as file:
        return sum(m.resident_kb for m in mappings(file.read()) if droppable(m))

before = gpu_resident()
released = release_gpu_code()
after = gpu_resident()
# The CPU path still runs after the release.
product = float((torch.ones(64, 64) @ torch.ones(64, 64))[0, 0])
print(json.dumps({"gpu": torch.cuda.is_available(), "before": before, "released": released, "after": after,
                  "product": product}))
"""


def test_a_process_without_a_gpu_drops_the_gpu_libraries_pages():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    if found["gpu"]:
        pytest.skip("this machine has a GPU: its libraries are kept")
    assert found["before"] > 10_000, "torch's import mapped no GPU library pages to give back"
    assert found["released"] >= found["before"]  # torch.cuda.is_available() may touch a few more first
    assert found["after"] < found["before"] / 10
    assert found["product"] == 64.0
