"""Create the registry's topics on a Kafka cluster before workers subscribe to them.

Consumers do not create topics, and a worker that subscribes to a missing topic
ignores it, so topics are declared explicitly with their partition counts.
"""

from __future__ import annotations

import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from schemas.registry import TOPICS

log = logging.getLogger(__name__)


async def ensure_topics(bootstrap: str, prefix: str, default_partitions: int) -> list[str]:
    """Create the registry topics that do not exist yet; the names created."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [
            NewTopic(f"{prefix}{spec.name}", spec.partitions or default_partitions, 1)
            for spec in TOPICS.values()
            if f"{prefix}{spec.name}" not in existing
        ]
        if missing:
            response = await admin.create_topics(missing)
            for name, code, *_ in response.topic_errors:
                if code not in (0, 36):  # 36: TOPIC_ALREADY_EXISTS (another worker won the race)
                    raise RuntimeError(f"creating topic {name} failed with Kafka error code {code}")
            log.info("created topics: %s", ", ".join(t.name for t in missing))
        return [t.name for t in missing]
    finally:
        await admin.close()


async def consumer_lag(bootstrap: str, group: str, topics: list[str]) -> int:
    """Sum over the topics' partitions of (end offset − the group's committed offset)."""
    from aiokafka import AIOKafkaConsumer

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        committed = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        partitions = [tp for tp in committed if tp.topic in topics]
        ends = await consumer.end_offsets(partitions) if partitions else {}
    finally:
        await consumer.stop()
    return sum(max(0, ends[tp] - committed[tp].offset) for tp in partitions)
