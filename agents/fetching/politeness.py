"""Per-host politeness: at most N requests in flight per host, and a minimum delay between starts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class HostGate:
    """One gate per host: a concurrency slot plus the earliest time the next request may start."""

    def __init__(self, concurrency: int) -> None:
        self.slots = asyncio.Semaphore(concurrency)
        self.next_start = 0.0
        self.lock = asyncio.Lock()


class Politeness:
    def __init__(self, per_host_concurrency: int, per_host_delay: float, global_concurrency: int) -> None:
        self.per_host_concurrency = per_host_concurrency
        self.per_host_delay = per_host_delay
        self._global = asyncio.Semaphore(global_concurrency)
        self._gates: dict[str, HostGate] = {}

    def _gate(self, host: str) -> HostGate:
        gate = self._gates.get(host)
        if gate is None:
            gate = self._gates[host] = HostGate(self.per_host_concurrency)
        return gate

    def postpone(self, host: str, seconds: float) -> None:
        """Push the host's next start back (a server's Retry-After)."""
        gate = self._gate(host)
        gate.next_start = max(gate.next_start, time.monotonic() + seconds)

    @asynccontextmanager
    async def slot(self, host: str, delay: float | None = None) -> AsyncIterator[None]:
        """Hold a request slot for host; delay overrides the default (robots Crawl-delay)."""
        gate = self._gate(host)
        spacing = self.per_host_delay if delay is None else max(delay, self.per_host_delay)
        async with gate.slots:
            async with gate.lock:
                wait = gate.next_start - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                gate.next_start = time.monotonic() + spacing
            async with self._global:
                yield
