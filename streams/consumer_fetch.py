"""How much a worker's Kafka consumer asks the broker to gather before it answers a fetch.

Faust builds its aiokafka consumer with aiokafka's `fetch_min_bytes` of 1: the broker answers a fetch as soon
as any partition has a byte. A sink that reads some thirty topics, each a trickle under load, then sends a
fetch request, wakes its consumer thread and hands a few messages to the event loop several hundred times a
second — in a 5,000-site soak's profile the sink spent 18 % of its samples in fetch requests and 20 % in the
loop's wake-ups, more than in its ClickHouse inserts. Asking for more bytes, and waiting a short while for
them, answers with fewer, larger batches. The wait is the most a message can be held at each hop when little
is flowing, so it is kept short (Faust's own 1.5 s would be added at every stage of an idle pipeline).

Faust passes neither setting through, so they are set on the consumer it builds, before it starts — the
attributes aiokafka reads when it creates its fetcher (aiokafka 0.14).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def gathering_fetches(create_consumer: Callable[..., Any], *, min_bytes: int,
                      max_wait_ms: int) -> Callable[..., Any]:
    """Wrap Faust's builder of the aiokafka consumer so that the consumer asks for at least `min_bytes` a
    fetch, waiting at most `max_wait_ms` for them."""

    def create(*args: Any, **kwargs: Any) -> Any:
        consumer = create_consumer(*args, **kwargs)
        if not (hasattr(consumer, "_fetch_min_bytes") and hasattr(consumer, "_fetch_max_wait_ms")):
            raise RuntimeError("aiokafka's consumer no longer keeps its fetch settings where this module sets "
                               "them (streams.consumer_fetch); update it for the installed aiokafka")
        consumer._fetch_min_bytes = min_bytes
        consumer._fetch_max_wait_ms = max_wait_ms
        return consumer

    return create
