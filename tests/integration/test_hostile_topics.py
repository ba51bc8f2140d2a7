"""A real worker on the real broker and chDB meets every kind of hostile value on every topic it reads (generated
from the registry by tests.hostile_messages): each goes to the dead-letter topic with its reason, and the worker
keeps going — a hostile value sent after a valid one is dead-lettered too."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from schemas.registry import TOPICS
from tests.conftest import ROOT, make_pipeline_env
from tests.hostile_messages import hostile_values, minimal_valid
from tests.integration.test_worker import _produce, _sql, _wait_for

pytestmark = pytest.mark.kafka
TOPIC_NAMES = sorted(TOPICS)


def _sent(topic: str) -> tuple[list[bytes], int]:
    """Hostile values, a valid message, one hostile value more; and how many are hostile."""
    hostile = [raw for _, raw in hostile_values(topic, seed=7)]
    valid = json.dumps(minimal_valid(topic) | {"event_id": f"valid-{topic}"}).encode()
    return [*hostile[:-1], valid, hostile[-1]], len(hostile)


@pytest.fixture(scope="module")
def hostile_run(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory):
    tmp_path: Path = tmp_path_factory.mktemp("hostile")
    env = make_pipeline_env(kafka_bootstrap, tmp_path)
    log = tmp_path / "worker.log"
    worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "warning"], env=env,
                              cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT, text=True)
    try:
        expected = 0
        for topic in TOPIC_NAMES:
            values, hostile = _sent(topic)
            asyncio.run(_produce(kafka_bootstrap, env["SOURCEWATCH_TOPIC_PREFIX"] + topic, values))
            expected += hostile if topic != "deadletter" else 0
        # (The valid message sent to `deadletter` is stored as a dead letter of its own made-up topic.)
        registry = ", ".join(f"'{topic}'" for topic in TOPIC_NAMES)
        stored = _wait_for(f"SELECT count() FROM deadletters WHERE topic IN ({registry})", [[expected]], env,
                           timeout=180)
        assert stored == [[expected]], log.read_text()[-3000:]
        yield env
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=90)
    assert worker.returncode == 0, log.read_text()[-3000:]


@pytest.mark.parametrize("topic", TOPIC_NAMES)
def test_hostile_values_on_a_topic_are_dead_lettered_with_their_reason(hostile_run, topic):
    _, hostile = _sent(topic)
    if topic == "deadletter":
        # An unreadable dead letter is logged and counted, never sent again (that would loop).
        counted = _wait_for("SELECT sum(value) FROM metrics WHERE name = 'deadletters' AND stage = 'deadletter'",
                            [[hostile]], hostile_run)
        assert counted == [[hostile]]
        return
    letters = _sql(f"SELECT count(), countIf(reason != ''), uniqExact(offset) FROM deadletters "
                   f"WHERE topic = '{topic}'", hostile_run)
    assert letters == [[hostile, hostile, hostile]]
