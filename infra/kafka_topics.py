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
