"""glibc malloc settings for a long-running worker, so that memory freed under load goes back to the system.

A processing worker allocates blocks of every size, from the event loop and from its executor threads: page
bodies and their parsed trees, message batches, tensors of each batch's shape. glibc serves a block of
128 KiB or more with its own mmap, returned to the system when freed — until the first such block is freed:
then glibc raises that threshold to the freed block's size (up to 32 MiB), and from then on those blocks come
from the heaps, where a block freed between two live ones is a hole that is never given back. glibc also
gives each thread that contends for a lock a heap of its own (up to 8 per core), each keeping its own free
memory. Under a backlog a worker's resident size grew that way with no object alive to show for it:
`sourcewatch soak --sites 5000` held ~1.1 GB that Python's own tracing (tracemalloc) did not see, of 1.5 GB.

So threads share ARENAS heaps, and with `SOURCEWATCH_WORKER_MAP_LARGE_BLOCKS` the threshold stays fixed at
glibc's own starting value (fixing it turns the raising off, for trimming too). Set with mallopt at start-up,
before the worker's threads and models allocate; elsewhere than glibc (musl, macOS) nothing is set and the
worker says so.

Measured with `sourcewatch soak --sites 5000 --days 2 --speed 288 --workers 1` (2026-11-28, runs back to
back): the processing worker's peak 1,339 MB with glibc's defaults, 955 MB with these settings, the same CPU.
But a block mapped is a system call and fresh zeroed pages each time, and a worker not saturated pays for it
in throughput: `sourcewatch soak --sites 1000 --days 2 --workers 2` (2026-11-29) revisited 21 pages a second
with the threshold fixed against 31 without (system CPU twice as high), for the same peak (~790 MB). So the
fixed threshold is a setting, off by default: on for a worker whose memory is what runs out.
jemalloc, preloaded instead, peaked at 1,043 MB in the same soak, and the embedded ClickHouse (chDB), which
brings an allocator of its own, aborts ("free(): invalid pointer") in a process with it preloaded.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

# mallopt's parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

MMAP_THRESHOLD = 128 * 1024  # glibc's starting value: blocks this large get their own mapping
TRIM_THRESHOLD = 128 * 1024  # free memory at a heap's top beyond this goes back (glibc's starting value)
ARENAS = 2
SHARED_HEAPS = {M_ARENA_MAX: ARENAS}
LARGE_BLOCKS_MAPPED = {M_MMAP_THRESHOLD: MMAP_THRESHOLD, M_TRIM_THRESHOLD: TRIM_THRESHOLD}


def return_freed_memory(map_large_blocks: bool = False) -> bool:
    """Apply the settings to this process's malloc (with `map_large_blocks`, the fixed threshold too); whether it
    is glibc's and took them."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # glibc's own symbol: mallopt's parameters mean what they say above
    except (OSError, AttributeError):
        log.warning("not glibc's malloc: its settings are left as they are (the worker's memory may grow under "
                    "load)")
        return False
    settings = SHARED_HEAPS | (LARGE_BLOCKS_MAPPED if map_large_blocks else {})
    refused = [parameter for parameter, value in settings.items() if libc.mallopt(parameter, value) != 1]
    if refused:
        log.warning("glibc's mallopt refused parameters %s: the worker's memory may grow under load", refused)
        return False
    if map_large_blocks:
        log.info("malloc: blocks of %d KiB and more mapped on their own, %d arenas", MMAP_THRESHOLD // 1024, ARENAS)
    else:
        log.info("malloc: %d arenas", ARENAS)
    return True
