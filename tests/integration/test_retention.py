"""A worker that runs for months lets go of what is no longer of use: a crawl's own state once the crawl is long
idle (the frontier's seen URLs and pages planned), and the items of a watched list no read has shown for long —
deleted from its tables with tombstones in their changelogs, so a restarted worker recovers none of them (on
the real broker)."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from infra.kafka_topics import _stop, consumer_group
from infra.site_server import serving_sites
from tests.conftest import cli_json, run_cli
from tests.integration.test_agent_failures import _start, _stop as _stop_worker
from tests.integration.test_pipeline import write_site
from tests.integration.test_worker import _wait_for
from tests.integration.test_worker_roles import _members

pytestmark = pytest.mark.kafka
TABLES = ("frontier-seen", "frontier-planned", "records-known-items")


async def _changelog_state(bootstrap: str, topic: str) -> dict[bytes, bytes | None]:
    """The table a worker would recover from a changelog: each key's last value (None: deleted)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    state: dict[bytes, bytes | None] = {}
    try:
        await consumer._client.force_metadata_update()
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        remaining = {tp for tp in partitions if ends[tp] > 0}
        while remaining:
            for tp, records in (await consumer.getmany(timeout_ms=1000)).items():
                for record in records:
                    if record.offset < ends[tp]:
                        state[record.key] = record.value
            remaining = {tp for tp in remaining if await consumer.position(tp) < ends[tp]}
    finally:
        await _stop(consumer)
    return state


def test_a_crawl_long_idle_is_let_go_of_and_no_worker_recovers_its_state(pipeline_env, tmp_path):
    # Idle for 8 s is "long" here (swept every 2 s), by default the topics' retention, a week; an item's time is
    # kept 16 s here, a year by default.
    env = pipeline_env | {"SOURCEWATCH_CRAWL_STATE_KEEP_HOURS": str(8 / 3600),
                          "SOURCEWATCH_KNOWN_ITEMS_KEEP_DAYS": str(16 / 86400)}
    bootstrap = env["SOURCEWATCH_KAFKA_BOOTSTRAP"]
    group = consumer_group(env["SOURCEWATCH_TOPIC_PREFIX"])
    site = tmp_path / "site-a"
    pages = sum(write_site(site).values())
    log = tmp_path / "worker.log"
    worker = _start("streams.cli", env, log)
    try:
        deadline = time.monotonic() + 90
        while not _members(env, "all") and time.monotonic() < deadline:
            time.sleep(1)
        with serving_sites([site], env=env) as homepages:
            crawl = cli_json(["crawl", "--seeds", homepages["site-a"]], env, timeout=240)
            # A listing watched: its first read lists its five items (and its next revisit comes in an hour).
            listing = homepages["site-a"] + "news/"
            assert run_cli(["watch", listing], env).returncode == 0
            _wait_for(f"SELECT count() FROM records WHERE source_url = '{listing}'", [[5]], env)
        # The crawl ran whole before anything was let go of: each page planned and fetched once.
        assert crawl["workers"] == "running" and crawl["pages_fetched"] == pages
        written: dict[str, int] = {}

        def every_key_deleted() -> bool:
            for table in TABLES:
                state = asyncio.run(_changelog_state(bootstrap, f"{group}-{table}-changelog"))
                written[table] = len(state)
                if not state or any(value is not None for value in state.values()):
                    return False
            return True

        deadline = time.monotonic() + 120
        while not every_key_deleted():
            assert time.monotonic() < deadline, f"crawl state still kept: {written}\n{log.read_text()[-3000:]}"
            time.sleep(2)
        # The crawl's seen URLs (one per page planned: the seed and its links, the dead one too) and its count for
        # the site, and the listing's own read's URL (crawl "watch": the page itself; it plans no link, so it
        # writes no count); the listing's five items, its page and its read's mark.
        assert written == {"frontier-seen": pages + 1, "frontier-planned": 1, "records-known-items": 7}
        expected = [["frontier-planned", 1], ["frontier-seen", pages + 1], ["records-known-items", 7]]
        dropped = _wait_for("SELECT labels['table'] AS t, toInt64(sum(value)) FROM metrics WHERE name = "
                            f"'table_keys_dropped' AND t IN {TABLES} GROUP BY t ORDER BY t", expected, env)
        assert dropped == expected
    finally:
        _stop_worker(worker, log)
