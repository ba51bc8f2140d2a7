"""A sink whose inserts fail for a while loses no row: not while it retries, and not when its worker is
stopped mid-failure and another starts later (real worker, real Kafka, real chDB). The fault is ClickHouse's
own: a CHECK constraint on the table that refuses every insert until a given time."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infra.clickhouse import ClickHouse
from schemas.registry import encode
from tests.conftest import ROOT
from tests.integration.test_worker import _page, _produce, _sql, _wait_for

pytestmark = pytest.mark.kafka


def _refuse_inserts_until(env: dict[str, str], seconds: float) -> float:
    """Make fetches_store refuse every insert for `seconds` from now; the Unix time it accepts again."""
    until = int(time.time() + seconds) + 1
    store = ClickHouse(env["SOURCEWATCH_CLICKHOUSE_DSN"])
    try:
        store.migrate()
        store.client.command(f"ALTER TABLE fetches_store ADD CONSTRAINT sink_fault CHECK now() >= toDateTime({until})")
    finally:
        store.close()
    return until


def _start_worker(env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "info"], env=env, cwd=ROOT,
                            stdout=log.open("a"), stderr=subprocess.STDOUT, text=True)


def _stop(worker: subprocess.Popen, log: Path) -> None:
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=90)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
        pytest.fail(f"the worker did not stop within 90 s of SIGTERM:\n{log.read_text()[-3000:]}")
    assert worker.returncode == 0, log.read_text()[-3000:]


def _wait_for_log(log: Path, text: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while text not in log.read_text():
        assert time.monotonic() < deadline, f"{text!r} never logged:\n{log.read_text()[-3000:]}"
        time.sleep(0.3)


def _produce_pages(env: dict[str, str], numbers: range) -> None:
    asyncio.run(_produce(env["SOURCEWATCH_KAFKA_BOOTSTRAP"], env["SOURCEWATCH_TOPIC_PREFIX"] + "pages.fetched",
                         [encode(_page(n)) for n in numbers]))


def _produce_pages_until_refused(env: dict[str, str], pages: int, log: Path) -> None:
    """Send pages to pages.fetched and wait until the sink says their insert failed."""
    _produce_pages(env, range(pages))
    _wait_for_log(log, "sink fetches: an insert of")


def test_rows_refused_for_a_while_are_all_stored_once_inserts_succeed(pipeline_env, tmp_path):
    until = _refuse_inserts_until(pipeline_env, 20)
    log = tmp_path / "worker.log"
    worker = _start_worker(pipeline_env, log)
    try:
        _produce_pages_until_refused(pipeline_env, 6, log)
        assert time.time() < until
        assert _sql("SELECT count() FROM fetches", pipeline_env) == [[0]]
        assert _wait_for("SELECT count() FROM fetches", [[6]], pipeline_env, timeout=until - time.time() + 60) == [[6]]
        _wait_for_log(log, "sink fetches: inserts succeed again")
        failures = _wait_for("SELECT sum(value) > 0 FROM metrics WHERE name = 'sink_insert_failures'", [[1]],
                             pipeline_env)
        assert failures == [[1]]
    finally:
        _stop(worker, log)


def test_a_worker_stopped_while_inserts_fail_leaves_its_rows_to_the_next_one(pipeline_env, tmp_path):
    """The refused batch and the pages queued behind it on the same partition are all left uncommitted (Faust
    would commit past an unacked offset if a later one were acked), and the worker still stops at once."""
    until = _refuse_inserts_until(pipeline_env, 30)
    log = tmp_path / "worker.log"
    first = _start_worker(pipeline_env, log)
    try:
        _produce_pages_until_refused(pipeline_env, 1, log)
        _produce_pages(pipeline_env, range(1, 5))
        time.sleep(2)  # the queued pages reach the worker's stream behind the refused one
    finally:
        _stop(first, log)
    assert time.time() < until, "the first worker must stop while inserts still fail"
    time.sleep(max(0.0, until - time.time()) + 1)
    second = _start_worker(pipeline_env, log)
    try:
        stored = _wait_for("SELECT count() FROM fetches", [[5]], pipeline_env, timeout=90)
        assert stored == [[5]], (f"{stored[0][0]} of 5 pages stored "
                                 f"({_sql('SELECT url FROM fetches ORDER BY url', pipeline_env)}):\n"
                                 f"{log.read_text()[-6000:]}")
    finally:
        _stop(second, log)
