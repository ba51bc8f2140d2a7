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
        # Until when the server asked for no request (its Retry-After): checked again just before each start.
        self.retry_at = 0.0
        self.lock = asyncio.Lock()
        # Requests past every check of the gate: sent, or on their way to being sent.
        self.under_way = 0


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

    def postpone(self, host: str, seconds: float) -> int:
        """Push the host's next start back (a server's Retry-After); how many of its requests are under way (past
        the gate's checks) as it is read — the server sees them after its Retry-After, and no crawler allowed
        more than one request per host at a time can call them back."""
        gate = self._gate(host)
        gate.retry_at = max(gate.retry_at, time.monotonic() + seconds)
        gate.next_start = max(gate.next_start, gate.retry_at)
        return gate.under_way

    def held_for(self, host: str) -> float:
        """Seconds the host's last Retry-After still asks for (0 when none)."""
        gate = self._gates.get(host)
        return max(0.0, gate.retry_at - time.monotonic()) if gate is not None else 0.0

    @asynccontextmanager
    async def slot(self, host: str, delay: float | None = None) -> AsyncIterator[None]:
        """Hold a request slot for host; delay overrides the default (robots Crawl-delay)."""
        gate = self._gate(host)
        spacing = self.per_host_delay if delay is None else max(delay, self.per_host_delay)
        async with gate.slots:
            async with gate.lock:
                # Postponed while it slept (a Retry-After for a request in flight): sleep on, and never pull the
                # next start earlier than a postponement set it.
                while (wait := gate.next_start - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
                gate.next_start = max(gate.next_start, time.monotonic() + spacing)
            async with self._global:
                # A Retry-After that came while this request waited for a global slot holds it too (one such
                # request reached a site in a 429 storm 0.1-1 s after it was told to wait: the soak with faults).
                while (wait := gate.retry_at - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
                gate.under_way += 1
                try:
                    yield
                finally:
                    gate.under_way -= 1
