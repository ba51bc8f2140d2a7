"""Per-host politeness (agents.fetching.politeness): a Retry-After holds every request not yet started."""

import asyncio
import time

from agents.fetching.politeness import Politeness


def test_a_retry_after_holds_requests_already_past_the_hosts_gate_and_waiting_for_a_global_slot():
    async def scenario() -> list[float]:
        politeness = Politeness(per_host_concurrency=2, per_host_delay=0.0, global_concurrency=1)
        starts: list[float] = []
        first_in = asyncio.Event()

        async def first():
            async with politeness.slot("busy.example.org"):
                first_in.set()
                await asyncio.sleep(0.05)
                politeness.postpone("busy.example.org", 0.3)  # its answer: 429, Retry-After

        async def second():
            await first_in.wait()
            async with politeness.slot("busy.example.org"):  # past the host's gate, waiting for the global slot
                starts.append(time.monotonic())

        began = time.monotonic()
        await asyncio.gather(first(), second())
        return [start - began for start in starts]

    (second_started,) = asyncio.run(scenario())
    assert second_started >= 0.34  # 0.05 s in flight, then the 0.3 s the server asked for


def test_a_retry_after_during_the_delay_between_starts_is_not_overwritten_by_the_delay():
    async def scenario() -> float:
        politeness = Politeness(per_host_concurrency=1, per_host_delay=0.1, global_concurrency=8)
        async with politeness.slot("busy.example.org"):
            pass
        began = time.monotonic()

        async def told_to_wait():
            await asyncio.sleep(0.02)  # while the next request sleeps out the delay between starts
            politeness.postpone("busy.example.org", 0.4)

        async def next_request() -> float:
            async with politeness.slot("busy.example.org"):
                return time.monotonic() - began

        _, started = await asyncio.gather(told_to_wait(), next_request())
        return started

    assert asyncio.run(scenario()) >= 0.41


def test_a_retry_after_tells_how_many_of_the_hosts_requests_were_already_under_way():
    async def scenario() -> tuple[int, int]:
        politeness = Politeness(per_host_concurrency=2, per_host_delay=0.0, global_concurrency=8)
        both_in = asyncio.Barrier(3)

        async def request():
            async with politeness.slot("busy.example.org"):
                await both_in.wait()
                await asyncio.sleep(0.05)

        requests = [asyncio.ensure_future(request()) for _ in range(2)]
        await both_in.wait()
        # One answer read while both are past the gate: its own request and the other are under way.
        while_both = politeness.postpone("busy.example.org", 0.01)
        await asyncio.gather(*requests)
        return while_both, politeness.postpone("busy.example.org", 0.01)

    assert asyncio.run(scenario()) == (2, 0)
