"""Every few seconds, the counters of this worker's stages go out as `metrics` messages."""

from __future__ import annotations

import asyncio
import os
import socket

from streams import metrics
from streams.app import app
from streams.topics import send

FLUSH_SECONDS = 5.0
WORKER_ID = f"{socket.gethostname()}:{os.getpid()}"


_sent = 0
# One flush at a time, and none once the worker's last one has run: a timer's flush still sending when the
# worker stops would otherwise meet a stopped producer (the worker crashed so, its metrics lost).
_flushing: asyncio.Lock | None = None
_closed = False


def sent() -> int:
    """Metrics messages this worker has sent so far."""
    return _sent


async def flush() -> int:
    global _sent, _flushing
    _flushing = _flushing or asyncio.Lock()
    async with _flushing:
        if _closed:
            return 0
        drained = metrics.drain(WORKER_ID)
        for metric in drained:
            await send("metrics", metric)
        _sent += len(drained)
        return len(drained)


@app.timer(interval=FLUSH_SECONDS)
async def flush_metrics():
    await flush()


@app.on_before_shutdown.connect
async def flush_at_shutdown(sender, **kwargs) -> None:
    # Sent once the streams have stopped and before the producer's last flush: the counts since the timer's
    # last flush would otherwise go with the process. It waits for a timer's flush under way, and is the last.
    global _closed
    await flush()
    _closed = True
