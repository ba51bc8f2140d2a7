"""A worker's graceful stop, bounded in time.

On SIGTERM or SIGINT (or when a crawl's driver is done) Mode stops the worker's services one after the other:
the consumers commit their offsets, the producer flushes, the tables write their changelogs. With the broker
unreachable those steps retry without end: a processing worker sent SIGTERM as its broker went down with it
(their parent killed) was found still running, at 90 % of a core, 21 minutes later. Past the deadline the
process exits at once, as a killed worker would — lossless all the same: delivery is at least once and rows
are idempotent, so what it had not committed goes to the next worker again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mode import Worker

log = logging.getLogger(__name__)
OVERDUE_EXIT_CODE = 1


@contextmanager
def graceful_stop_within(worker: Worker, seconds: float) -> Iterator[None]:
    """While the block runs, a stop requested of `worker` ends the process within `seconds`, whatever hangs."""
    deadline: list[threading.Timer] = []
    schedule_shutdown = worker._schedule_shutdown  # Mode's one path for signals and our driver's end alike

    def with_deadline(signal_received) -> None:
        if not deadline:
            timer = threading.Timer(seconds, _exit_overdue, args=(seconds,))
            timer.daemon = True
            timer.start()
            deadline.append(timer)
        schedule_shutdown(signal_received)

    worker._schedule_shutdown = with_deadline
    try:
        yield
    finally:
        # Stopped in time: a command that runs on after its worker (a crawl's summary) is not cut short.
        for timer in deadline:
            timer.cancel()
        worker._schedule_shutdown = schedule_shutdown


def _exit_overdue(seconds: float) -> None:
    log.error("the worker's graceful stop did not end within %g s (is the broker reachable?): exiting now; "
              "messages it had not committed are delivered again to the next worker", seconds)
    logging.shutdown()
    os._exit(OVERDUE_EXIT_CODE)
