"""Giving back the memory of the GPU libraries torch maps on a machine that has no GPU.

PyPI's torch wheel (the CPU-only build is not on PyPI) links its CUDA stack — cuBLASLt, nvJitLink, nvrtc,
libtorch_cuda and the rest of the `nvidia` packages — into every process that imports torch, and the kernel
maps their code in large chunks as the loader reads them: 150–290 MB of a process's resident size right after
`import torch` on this machine, all of it file-backed and clean, none of it ever run where torch sees no GPU.
A processing worker takes those pages out of its resident set (madvise MADV_DONTNEED). That loses nothing
only where the mapping holds no page of its own, so only read-only mappings with no private copy of a page
(nothing relocated) are named: a page touched again is read back from its file, the same bytes. The pages
stay in the page cache while another process maps them (the kernel's to keep or drop); MADV_PAGEOUT, which
would drop them from the cache too, leaves alone every page another process maps — and the soak's own
process and the sink import torch too, so it released nothing there.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
from dataclasses import dataclass

log = logging.getLogger(__name__)

MADV_DONTNEED = 4
_MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")
# torch's own libraries for the GPU, beside the CUDA packages under site-packages/nvidia/.
_GPU_LIBRARY_WORDS = ("cuda", "nvrtc", "nvshmem")


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    path: str
    writable: bool
    resident_kb: int
    own_kb: int  # anonymous or dirty: this process's own copy of a page, which dropping it would lose

    @property
    def of_gpu_library(self) -> bool:
        name = os.path.basename(self.path)
        return ".so" in name and ("/nvidia/" in self.path or any(word in name for word in _GPU_LIBRARY_WORDS))


def mappings(smaps: str) -> list[Mapping]:
    """The file mappings of a /proc/PID/smaps text, with their resident and own (anonymous, dirty) sizes."""
    found: list[Mapping] = []
    start = end = resident = own = 0
    path = permissions = ""

    def close() -> None:
        if path.startswith("/"):
            found.append(Mapping(start, end, path, "w" in permissions, resident, own))

    for line in smaps.splitlines():
        head = _MAPPING.match(line)
        if head:
            close()
            start, end, permissions, path = int(head[1], 16), int(head[2], 16), head[3], head[4].strip()
            resident = own = 0
            continue
        key, _, value = line.partition(":")
        if key == "Rss":
            resident = int(value.split()[0])
        elif key in ("Anonymous", "Private_Dirty", "Shared_Dirty"):
            own += int(value.split()[0])
    close()
    return found


def droppable(mapping: Mapping) -> bool:
    """A resident mapping of a GPU library whose pages are all its file's: read-only, no private copy."""
    return mapping.of_gpu_library and bool(mapping.resident_kb) and not mapping.writable and not mapping.own_kb


def release_gpu_code() -> int:
    """Import torch and, where it sees no GPU, drop the resident pages of its GPU libraries from this
    process; the kB dropped (0 where there is a GPU or nothing to drop)."""
    import torch

    if torch.cuda.is_available():
        return 0
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as file:
        unused = [mapping for mapping in mappings(file.read()) if droppable(mapping)]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    released = 0
    for mapping in unused:
        if libc.madvise(mapping.start, mapping.end - mapping.start, MADV_DONTNEED) != 0:
            error = ctypes.get_errno()
            log.warning("GPU libraries kept resident: madvise(MADV_DONTNEED) failed on %s: %s",
                        mapping.path, os.strerror(error))
            return released
        released += mapping.resident_kb
    log.info("no GPU: %d MB of torch's GPU libraries dropped from memory", released // 1024)
    return released
