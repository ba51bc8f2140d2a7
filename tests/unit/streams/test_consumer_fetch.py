"""The worker's Kafka consumer gathers its fetches as the settings say (streams.consumer_fetch): the consumer
Faust builds for the app carries them into aiokafka's fetcher — no broker is needed to build it."""

import json
import os
import subprocess
import sys

import pytest

from streams.consumer_fetch import gathering_fetches

PROBE = """
import asyncio
import json
from streams.app import app

async def build():
    thread = app.consumer._thread
    consumer = thread._create_worker_consumer(app.transport)
    return {"min_bytes": consumer._fetch_min_bytes, "max_wait_ms": consumer._fetch_max_wait_ms}

print(json.dumps(asyncio.run(build())))
"""


def test_the_apps_consumer_asks_for_the_settings_fetch_sizes():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SOURCEWATCH_KAFKA_FETCH_MIN_BYTES": "12345",
                               "SOURCEWATCH_KAFKA_FETCH_MAX_WAIT_MS": "77"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"min_bytes": 12345, "max_wait_ms": 77}


def test_a_consumer_without_the_fetch_settings_is_refused_with_a_reason():
    create = gathering_fetches(lambda: object(), min_bytes=1024, max_wait_ms=50)
    with pytest.raises(RuntimeError, match="streams.consumer_fetch"):
        create()
