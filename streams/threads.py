"""How a process that reads pages with the models shares the machine's cores.

Reading a page runs numpy and torch in turn: the text encoder (models.text_encoders, numpy over OpenBLAS, two
threads) embeds the page's new texts, then a torch network scores them. Each library keeps its own thread pool,
and a pool's threads spin for a while after their work before they sleep: with torch's OpenMP pool beside
OpenBLAS's on two cores, every small torch operation waits for a thread that shares its core with a spinning
one. Measured 2026-11-26 on this 2-core machine, the text cache cold (every text embedded for the first time):
discovery's anchor scoring 1,200 anchors/s with both pools at two threads, 3,500 with the encoder on one
thread, 3,900–4,200 with torch on one; pagination tagging page by page 11–14 pages/s, 18–19 with torch on one.
Torch's inference here is small sequential work (a BiLSTM over one page's nodes or anchors), which a second
thread did not speed up (tagging's benchmark: the same pages/s either way). Training keeps torch's default:
its large batched products do use every core.

A worker reads pages in executor threads beside its event loop, and Python's threads share one lock (the GIL).
A call that lets go of it — an lxml XPath, a numpy operation on a large array, each socket call of the event
loop — must take it back when done, and while the other thread runs Python it waits for that thread to hand
it over, which CPython asks of it only every switch interval (5 ms by default). So each such call cost up to
5 ms: measured 2026-11-29 on the simulated web's listing pages, record extraction took 6.5 ms a page alone and
380 ms beside a thread running Python (the list ranker's numpy walk over its trees, ~100 operations a page,
most of it), and a 5,000-page soak's processing worker spent over half its time waiting so. A worker (setting
`worker_switch_interval_ms`) asks the running thread to hand over sooner.
"""

from __future__ import annotations

import sys

INFERENCE_TORCH_THREADS = 1


def threads_for_reading() -> None:
    """Torch on INFERENCE_TORCH_THREADS threads and the GIL handed over every `worker_switch_interval_ms`, for a
    process that reads pages (a worker; the benchmarks that time what a worker does)."""
    import torch

    from infra.settings import get_settings

    torch.set_num_threads(INFERENCE_TORCH_THREADS)
    sys.setswitchinterval(get_settings().worker_switch_interval_ms / 1000)
