"""`sourcewatch resend`: the messages agents failed to handle, sent again to their topics.

A batch an agent fails on is dead-lettered, each message with the stage and the error
(streams.deadletters.kept_if_failed). Once the fault is mended (a new release, a model file put back), this
reads those dead letters — after the ones an earlier resend read, or all retained with --from-beginning —
fetches each failed message whole from its own topic by partition and offset (a dead letter keeps only its
first 100,000 characters), and produces it again with its key. Every agent reading the topic handles it
again; as for any redelivery, rows replace their earlier copies by id. A message whose topic no longer
retains it is reported, not resent from its cut copy. Messages that failed to validate are not resent: they
would fail alike. The group remembers the dead letters as read before they are resent: a resend cut short is
run again with --from-beginning (resending twice is harmless).
"""

from __future__ import annotations

from collections import Counter

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from infra.kafka_broker import bootstrap_address
from infra.settings import get_settings
from jobs.replay import read_topic
from schemas.deadletter import DeadLetter, failed_stage

# How long to wait for one failed message from its topic before calling it gone.
FETCH_TIMEOUT_MS = 10_000


async def resend_failed(stage: str | None, from_beginning: bool, group: str) -> dict:
    """Send again the messages dead-lettered by failed batches (of agent `stage` only, where given): counts of
    the dead letters read, the messages resent (each once, whichever stages failed on it) and those gone."""
    def failed(letter: DeadLetter) -> bool:
        failed_in = failed_stage(letter.reason)
        return failed_in is not None and stage in (None, failed_in)

    letters, _ = await read_topic("deadletter", from_beginning, group, keep=failed)
    wanted = sorted({(letter.topic, letter.partition, letter.offset) for letter in letters})
    settings = get_settings()
    bootstrap = bootstrap_address(settings)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                max_partition_fetch_bytes=settings.kafka_max_message_bytes,
                                fetch_max_bytes=settings.kafka_max_message_bytes * 4)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, compression_type="gzip",
                                max_request_size=settings.kafka_max_message_bytes)
    resent: Counter[str] = Counter()
    gone: list[dict] = []
    await consumer.start()
    await producer.start()
    try:
        for topic, partition, offset in wanted:
            kafka_topic = f"{settings.topic_prefix}{topic}"
            record = await _record_at(consumer, TopicPartition(kafka_topic, partition), offset)
            if record is None:
                gone.append({"topic": topic, "partition": partition, "offset": offset})
                continue
            await producer.send(kafka_topic, value=record.value, key=record.key)
            resent[topic] += 1
        await producer.flush()
    finally:
        await producer.stop()
        await consumer.stop()
    return {"dead_letters": len(letters), "resent": sum(resent.values()), "resent_by_topic": dict(resent),
            "gone": gone, "stages": dict(Counter(failed_stage(letter.reason) for letter in letters))}


async def _record_at(consumer: AIOKafkaConsumer, partition: TopicPartition, offset: int):
    """The record at `offset`, or None where the partition no longer holds it (retention, compaction)."""
    consumer.assign([partition])
    consumer.seek(partition, offset)
    batches = await consumer.getmany(partition, timeout_ms=FETCH_TIMEOUT_MS, max_records=1)
    records = batches.get(partition, [])
    return records[0] if records and records[0].offset == offset else None
