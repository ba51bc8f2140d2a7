"""`sourcewatch replay`: export a topic to JSONL or Parquet for offline training.

Reads every partition up to the end offsets seen at start, validating each
message with its registry model (invalid ones are counted and skipped; they
are in `deadletter` already when an agent met them). Without --from-beginning a
consumer group remembers how far earlier exports got, so exports are incremental.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from rich.progress import Progress

from infra.kafka_broker import bootstrap_address
from infra.settings import get_settings
from schemas.base import Message
from schemas.registry import TOPICS, InvalidMessage, decode


async def replay_topic(name: str, out: Path, from_beginning: bool, group: str, show_progress: bool = False) -> dict:
    if out.suffix not in (".jsonl", ".parquet"):
        raise SystemExit("error: --out must end in .jsonl or .parquet")
    messages, invalid = await read_topic(name, from_beginning, group, show_progress)
    _write([message.model_dump(mode="json") for message in messages], out)
    return {"topic": name, "exported": len(messages), "invalid": invalid, "out": str(out)}


async def read_topic(name: str, from_beginning: bool, group: str, show_progress: bool = False,
                     keep: Callable[[Message], bool] = lambda _: True) -> tuple[list, int]:
    """The valid messages of a topic up to its current end (from the beginning, or after the group's last
    read) that `keep` accepts, and how many invalid ones were skipped; the group then remembers the end."""
    if name not in TOPICS:
        raise SystemExit(f"error: unknown topic {name!r}; topics: {', '.join(TOPICS)}")
    settings = get_settings()
    kafka_topic = f"{settings.topic_prefix}{name}"
    bootstrap = bootstrap_address(settings)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=f"{settings.topic_prefix}{group}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=settings.kafka_max_message_bytes,
        fetch_max_bytes=settings.kafka_max_message_bytes * 4,
    )
    await consumer.start()
    messages: list = []
    invalid = 0
    try:
        partitions = [TopicPartition(kafka_topic, p) for p in await _partition_ids(bootstrap, kafka_topic)]
        if not partitions:
            raise SystemExit(f"error: topic {kafka_topic} does not exist on {bootstrap}")
        consumer.assign(partitions)
        if from_beginning:
            await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        remaining = {tp for tp in partitions if await consumer.position(tp) < ends[tp]}
        with Progress(disable=not show_progress, transient=True) as bar:
            task = bar.add_task(f"replaying {name}", total=None)
            while remaining:
                batches = await consumer.getmany(timeout_ms=1000, max_records=2000)
                for tp, records in batches.items():
                    for record in records:
                        if record.offset >= ends[tp]:
                            continue
                        try:
                            message = decode(name, record.value)
                        except InvalidMessage:
                            invalid += 1
                            continue
                        if keep(message):
                            messages.append(message)
                    bar.advance(task, len(records))
                for tp in list(remaining):
                    if await consumer.position(tp) >= ends[tp]:
                        remaining.discard(tp)
        await consumer.commit({tp: ends[tp] for tp in partitions})
    finally:
        await consumer.stop()
    return messages, invalid


async def _partition_ids(bootstrap: str, kafka_topic: str) -> list[int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics([kafka_topic])
    finally:
        await admin.close()
    return sorted(p["partition"] for t in described if t.get("error_code", 0) == 0 for p in t["partitions"])


def _write(rows: list[dict], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".jsonl":
        with out.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    # Nested fields (anchors, records, labels) are kept as JSON text, one column per top-level field.
    flat = [{key: json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
             for key, value in row.items()} for row in rows]
    pq.write_table(pa.Table.from_pylist(flat), out)
