"""A broker outage under a running worker: one log line when it starts, one when it ends with its length —
not thousands of connection errors — and the worker carries on afterwards (its own real broker, stopped
and started again)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest

from infra.kafka_broker import LocalKafka
from infra.settings import Settings
from tests.conftest import ROOT, free_port, make_pipeline_env
from tests.integration.test_sink_faults import _wait_for_log

pytestmark = pytest.mark.kafka


def test_a_broker_outage_is_logged_once_with_its_length(tmp_path):
    broker = LocalKafka(Settings().kafka_libs, tmp_path / "kafka", port=free_port(29192), heap_mb=512)
    bootstrap = broker.start().bootstrap
    env = make_pipeline_env(bootstrap, tmp_path)
    log = tmp_path / "worker.log"
    worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "info"], env=env, cwd=ROOT,
                              stdout=log.open("w"), stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for_log(log, "[^Worker]: Ready", timeout=120)
        time.sleep(5)  # past the start-up, whose own coordinator errors are no outage
        broker.stop()
        time.sleep(15)
        broker.start()
        _wait_for_log(log, "answers again after an outage of", timeout=120)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=90)
        broker.stop()
    text = log.read_text()
    assert worker.returncode == 0, text[-3000:]
    errors = [line for line in text.splitlines() if "[ERROR]" in line]
    assert sum("unreachable" in line for line in errors) == 1, errors[:20]
    assert not [line for line in errors if "Unable connect" in line and "unreachable" not in line], errors[:20]
    assert len(errors) <= 3, errors[:20]
    ended = [line for line in text.splitlines() if "answers again after an outage of" in line]
    assert len(ended) == 1 and "connection errors not logged" in ended[0]
    length = int(re.search(r"an outage of (\d+) s", ended[0])[1])
    assert length >= 15  # the broker was down at least that long


def test_a_worker_stopped_while_its_broker_is_down_exits_by_its_deadline(tmp_path):
    broker = LocalKafka(Settings().kafka_libs, tmp_path / "kafka", port=free_port(29192), heap_mb=512)
    bootstrap = broker.start().bootstrap
    env = make_pipeline_env(bootstrap, tmp_path) | {"SOURCEWATCH_WORKER_STOP_SECONDS": "10"}
    log = tmp_path / "worker.log"
    worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--role", "process",
                               "--loglevel", "info"], env=env, cwd=ROOT, stdout=log.open("w"),
                              stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for_log(log, "[^Worker]: Ready", timeout=120)
        broker.stop()
        worker.send_signal(signal.SIGTERM)
        # Its consumers' last commits and the producer's flush wait on the broker: the deadline ends them.
        returncode = worker.wait(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
        broker.stop()
    text = log.read_text()
    assert returncode == 1, text[-3000:]
    assert "graceful stop did not end within 10 s" in text
