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

Training and evaluating the discovery agent and the revisit model is the same kind of small sequential work — one
episode's anchors, one source's series at a time — and there a second thread for torch or for numpy's BLAS mostly
spins. Measured 2026-12-07 on this machine, both libraries' defaults (two threads each) against both on one:
`train discovery --from discovery_pretrained.pt --finetune-simweb 40 --stop-rule learned` 252 → 200 s wall, 450 →
268 s of CPU (230 s / 303 s with torch alone on one), the agent it wrote scoring the same on the held-out simulated
web (weights within 5·10⁻⁶); pre-training 5 epochs 21–23 → 15 s; a 5-fold `eval discovery` with brief fine-tuning
534 → 498 s, 941 → 554 s of CPU; `eval revisit --cold-start` (24 sources, 2 folds) 32 s either way, 54 → 31 s of
CPU, the same figures. The source-page classifier's logistic regression over its sentence vectors likewise:
`eval classifier --sites <data>/sites` 181–184 → 94–103 s wall, 326–331 → 136–146 s of CPU, the same figures;
`train classifier` 43 → 35 s (its weights within 0.003: the solver stops a little elsewhere). Beside other work on
the cores (the test suite's other process) the spinning costs it too.
Tagging pagination trains a BiLSTM-CRF over whole pages and gained nothing either way (3 epochs: 8–9 s), so it keeps
the defaults.
"""

from __future__ import annotations

import sys

INFERENCE_TORCH_THREADS = 1
SMALL_MODEL_THREADS = 1


def threads_for_reading() -> None:
    """Torch on INFERENCE_TORCH_THREADS threads and the GIL handed over every `worker_switch_interval_ms`, for a
    process that reads pages (a worker; the benchmarks that time what a worker does)."""
    import torch

    from infra.settings import get_settings

    torch.set_num_threads(INFERENCE_TORCH_THREADS)
    sys.setswitchinterval(get_settings().worker_switch_interval_ms / 1000)


def threads_for_small_models() -> None:
    """Torch and numpy's BLAS on SMALL_MODEL_THREADS threads, for a process that trains or evaluates the discovery
    agent, the source-page classifier or the revisit model."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(SMALL_MODEL_THREADS)
    threadpool_limits(SMALL_MODEL_THREADS)
