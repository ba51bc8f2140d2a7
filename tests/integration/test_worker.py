"""A long-running worker: invalid messages go to deadletter, redeliveries never double count, it keeps going."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient

from schemas.crawl import PageFetched
from schemas.registry import encode
from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.kafka


def _page(n: int) -> PageFetched:
    return PageFetched(site="example.org", url=f"https://example.org/{n}", final_url=f"https://example.org/{n}",
                       crawl_id="replayed", status=200, content_type="text/html", max_depth=0,
                       body=f'<a href="/next-{n}">next</a>')


async def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:  # the worker creates its topics on start; wait for them rather than auto-creating one
        deadline = time.monotonic() + 60
        while topic not in await admin.list_topics() and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, value, key=b"example.org")
    finally:
        await producer.stop()


def _sql(query: str, env: dict[str, str]) -> list[list]:
    result = run_cli(["sql", query, "--json"], env, timeout=60)
    assert result.returncode == 0, result.stderr
    import json

    return [list(row.values()) for row in json.loads(result.stdout)]


def _wait_for(query: str, expected: list[list], env: dict[str, str], timeout: float = 60) -> list[list]:
    deadline = time.monotonic() + timeout
    while True:
        rows = _sql(query, env)
        if rows == expected or time.monotonic() > deadline:
            return rows
        time.sleep(1)


def test_worker_dead_letters_invalid_messages_and_deduplicates_redeliveries(pipeline_env):
    worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "warning"],
                              env=pipeline_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        topic = pipeline_env["SOURCEWATCH_TOPIC_PREFIX"] + "pages.fetched"
        first, second = encode(_page(1)), encode(_page(2))
        # The same message twice (a redelivery), then garbage, then a new valid message.
        asyncio.run(_produce(pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"], topic,
                             [first, first, b'{"site": "example.org", "url": 5}', b"\xff\xfe not json", second]))
        fetches = _wait_for("SELECT count() FROM fetches", [[2]], pipeline_env)
        assert fetches == [[2]]
        letters = _wait_for("SELECT count() FROM deadletters", [[2]], pipeline_env)
        assert letters == [[2]]
        reasons = _sql("SELECT topic, reason FROM deadletters ORDER BY offset", pipeline_env)
        assert [row[0] for row in reasons] == ["pages.fetched", "pages.fetched"]
        assert "PageFetched" in reasons[0][1] and "Field required" in reasons[0][1]
        assert "Invalid JSON" in reasons[1][1]
        # Links of both valid pages went through too: the worker kept going after the bad ones.
        assert _wait_for("SELECT count() FROM links", [[2]], pipeline_env) == [[2]]
        # At their maximum depth the frontier planned nothing more.
        assert _sql("SELECT count() FROM fetches WHERE crawl_id != 'replayed'", pipeline_env) == [[0]]
        # Replaying the first page once more still leaves two rows.
        asyncio.run(_produce(pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"], topic, [first]))
        time.sleep(3)
        assert _sql("SELECT count() FROM fetches", pipeline_env) == [[2]]
        assert _sql("SELECT count() FROM fetches_store", pipeline_env)[0][0] >= 2
    finally:
        worker.send_signal(signal.SIGTERM)
        output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output[-3000:]
    # Once the worker is gone, the CLI opens chDB itself and sees the same rows.
    assert _sql("SELECT count() FROM fetches", pipeline_env) == [[2]]
