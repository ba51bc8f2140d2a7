"""The worker's glibc malloc settings: with large blocks mapped (SOURCEWATCH_WORKER_MAP_LARGE_BLOCKS), memory freed
between live blocks goes back to the system."""

import ctypes.util
import subprocess
import sys

import pytest

# A real process: 1 MiB blocks allocated after an 8 MiB one was freed, then every other one freed — holes
# between live blocks. Prints how many MiB of resident memory the frees gave back.
_HOLES = """
import ctypes, sys
from streams.malloc import return_freed_memory

if sys.argv[1] == "settled":
    assert return_freed_memory(map_large_blocks=True)
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]

def resident_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20

first = libc.malloc(8 << 20)
ctypes.memset(first, 1, 8 << 20)
libc.free(first)  # glibc's default: its threshold rises to 8 MiB, later 1 MiB blocks come from the heap
blocks = [libc.malloc(1 << 20) for _ in range(200)]
for block in blocks:
    ctypes.memset(block, 1, 1 << 20)
before = resident_mib()
for block in blocks[::2]:
    libc.free(block)
print(before - resident_mib())
"""

glibc = pytest.mark.skipif("libc.so.6" not in (ctypes.util.find_library("c") or ""), reason="glibc's malloc only")


def _freed_mib(mode: str) -> float:
    done = subprocess.run([sys.executable, "-c", _HOLES, mode], capture_output=True, text=True, timeout=60,
                          check=True)
    return float(done.stdout)


@glibc
def test_blocks_freed_between_live_ones_go_back_to_the_system_once_settled():
    assert _freed_mib("settled") > 90  # 100 MiB freed, each block its own mapping
    assert _freed_mib("default") < 10  # the same frees under glibc's defaults: holes in the heap, kept
