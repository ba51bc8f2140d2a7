"""Create the registry's topics on a Kafka cluster before workers subscribe to them.

Consumers do not create topics, and a worker that subscribes to a missing topic
ignores it, so topics are declared explicitly with their partition counts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import GroupCoordinatorNotAvailableError

from schemas.base import Message
from schemas.registry import TOPICS, encode

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TopicDeclaration:
    """A topic outside the registry to create with it (a Faust table's changelog): full name, partitions, and
    its topic-level configuration."""

    name: str
    partitions: int
    config: dict[str, str] = field(default_factory=dict)


async def ensure_topics(bootstrap: str, prefix: str, default_partitions: int,
                        more: Sequence[TopicDeclaration] = ()) -> list[str]:
    """Create the registry topics, and `more`, that do not exist yet; the names created."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [TopicDeclaration(f"{prefix}{spec.name}", spec.partitions or default_partitions)
                  for spec in TOPICS.values()] + list(more)
        missing = [NewTopic(topic.name, topic.partitions, 1, topic_configs=topic.config)
                   for topic in wanted if topic.name not in existing]
        if missing:
            response = await admin.create_topics(missing)
            for name, code, *_ in response.topic_errors:
                if code not in (0, 36):  # 36: TOPIC_ALREADY_EXISTS (another worker won the race)
                    raise RuntimeError(f"creating topic {name} failed with Kafka error code {code}")
            log.info("created topics: %s", ", ".join(t.name for t in missing))
        return [t.name for t in missing]
    finally:
        await admin.close()


async def delete_topics(bootstrap: str, prefix: str) -> list[str]:
    """Delete every topic whose name begins with `prefix` — a run's own topics and its tables' changelogs (the
    app's id begins with the prefix too); the names deleted."""
    if not prefix:
        raise ValueError("no topic prefix: refusing to delete every topic of the cluster")
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        names = sorted(name for name in await admin.list_topics() if name.startswith(prefix))
        if names:
            response = await admin.delete_topics(names)
            failed = [(name, code) for name, code, *_ in response.topic_error_codes if code != 0]
            if failed:
                raise RuntimeError(f"deleting topics failed (name, Kafka error code): {failed}")
        return names
    finally:
        await admin.close()


@dataclass(frozen=True)
class PrefixTopics:
    """The topics of one prefix on a cluster: a deployment's, or a run's (a benchmark's, a soak's kept)."""

    prefix: str
    topics: int
    partitions: int


# Every prefix ensure_topics has served holds this topic: what tells sourcewatch's prefixes from other topics.
_EVERY_PREFIX_HAS = "pages.fetched"
# The Faust apps' own topics (table changelogs, the assignor's) begin with the prefix, then the app's id.
_APP_TOPIC = "sourcewatch-"


def prefix_of(name: str) -> str | None:
    """The prefix a topic named like sourcewatch's has before the registry's name or the app's id; None else."""
    for topic in TOPICS:
        if name.endswith(topic):
            return name[:-len(topic)]
    return name[:name.index(_APP_TOPIC)] if _APP_TOPIC in name else None


async def topic_partitions(bootstrap: str) -> dict[str, int]:
    """Every topic on the cluster and its partitions."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        names = sorted(await admin.list_topics())
        return {described["topic"]: len(described["partitions"])
                for described in await admin.describe_topics(names)} if names else {}
    finally:
        await admin.close()


def by_prefix(partitions: dict[str, int]) -> tuple[list[PrefixTopics], list[str]]:
    """sourcewatch's topics grouped by prefix (most partitions first), and the other topics (Kafka's own left
    out)."""
    names = sorted(partitions)
    groups: dict[str, list[str]] = {}
    for name in names:
        if (prefix := prefix_of(name)) is not None:
            groups.setdefault(prefix, []).append(name)
    ours = {prefix: members for prefix, members in groups.items() if f"{prefix}{_EVERY_PREFIX_HAS}" in members}
    listed = [PrefixTopics(prefix, len(members), sum(partitions[name] for name in members))
              for prefix, members in ours.items()]
    counted = {name for members in ours.values() for name in members}
    return (sorted(listed, key=lambda group: (-group.partitions, group.prefix)),
            [name for name in names if name not in counted and not name.startswith("__")])


WORKER_ROLES = ("all", "process", "sink")


def consumer_group(prefix: str, role: str = "all") -> str:
    """The consumer group (the Faust app's id) of workers in a role: the processing workers' (roles all and
    process, the group the stages' tables follow), or the sink workers'."""
    return f"{prefix}sourcewatch-sink" if role == "sink" else f"{prefix}sourcewatch"


def worker_client_id(role: str) -> str:
    """The Kafka client id a worker in this role gives, so that others can tell its role in the group."""
    return f"sourcewatch-{role}"


async def group_members(bootstrap: str, group: str) -> list[str]:
    """The client ids of the consumers (workers) in the group now. A group no consumer has joined yet may have
    no coordinator (on a new cluster the offsets topic is created by the first group): none are in it."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (response,) = await admin.describe_consumer_groups([group])
    except GroupCoordinatorNotAvailableError:
        return []
    finally:
        await admin.close()
    # DescribeGroups' group entries: (error_code, group, state, protocol_type, protocol, members), each member
    # (member_id, client_id, client_host, metadata, assignment).
    (_, _, _, _, _, members), = response.groups
    return [member[1] for member in members]


async def queue_positions(bootstrap: str, group: str) -> dict[tuple[str, int], tuple[int, int]]:
    """Per (topic, partition) the group has committed an offset in: (committed offset, end offset)."""
    from aiokafka import AIOKafkaConsumer

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        committed = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    if not committed:
        return {}
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(list(committed))
    finally:
        await _stop(consumer)
    return {(partition.topic, partition.partition): (offset.offset, ends[partition])
            for partition, offset in committed.items()}


async def lag_by_topic(bootstrap: str, group: str) -> dict[str, int]:
    """Per topic the group has committed offsets in: the sum over its partitions of (end offset − committed)."""
    return lags_of(await queue_positions(bootstrap, group))


def lags_of(positions: dict[tuple[str, int], tuple[int, int]]) -> dict[str, int]:
    """Per topic: the sum over its partitions of (end offset − committed)."""
    lags: dict[str, int] = {}
    for (topic, _), (committed, end) in positions.items():
        lags[topic] = lags.get(topic, 0) + max(0, end - committed)
    return lags


async def _stop(consumer) -> None:
    """Stop a group-less consumer. aiokafka 0.14 may raise its own cancelled start-up task's CancelledError
    from stop() when the consumer is stopped soon after starting; only a cancellation of this task goes on."""
    try:
        await consumer.stop()
    except asyncio.CancelledError:
        if asyncio.current_task().cancelling():
            raise


async def consumer_lag(bootstrap: str, group: str, topics: list[str]) -> int:
    """Sum over the topics' partitions of (end offset − the group's committed offset)."""
    lags = await lag_by_topic(bootstrap, group)
    return sum(lags.get(topic, 0) for topic in topics)


async def send_messages(bootstrap: str, prefix: str, partitions: int, messages: list[tuple[str, Message]]) -> None:
    """Send (topic, message) pairs, each keyed by its site as every producer of the topics keys them, creating
    the topics first if they are missing (from outside a worker: the CLI, the service)."""
    from aiokafka import AIOKafkaProducer

    await ensure_topics(bootstrap, prefix, partitions)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        for topic, message in messages:
            await producer.send(f"{prefix}{topic}", key=message.site.encode("utf-8"), value=encode(message))
        await producer.flush()
    finally:
        await producer.stop()
