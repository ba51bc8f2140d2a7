"""An agent that raises on a valid message (a bug meeting a page nobody foresaw) keeps what it held: the
batch goes to the dead-letter topic with the error and its traceback, is counted, and the agent goes on —
unguarded, Faust restarted the agent and acknowledged the batch, which was then lost without a trace. Once
the fault is gone, `sourcewatch resend` sends the failed messages again and they are handled."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from schemas.registry import encode
from tests.conftest import ROOT, cli_json
from tests.integration.failing_worker import FAULT_MARK
from tests.integration.test_worker import _page, _produce, _sql, _wait_for

pytestmark = pytest.mark.kafka
FAILING_URL = f"https://example.org{FAULT_MARK}"


def _start(module: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", module, "worker", "--loglevel", "warning"], env=env, cwd=ROOT,
                            stdout=log.open("w"), stderr=subprocess.STDOUT, text=True)


def _stop(worker: subprocess.Popen, log: Path) -> None:
    worker.send_signal(signal.SIGTERM)
    worker.wait(timeout=90)
    assert worker.returncode == 0, log.read_text()[-3000:]


def test_a_failed_batch_is_dead_lettered_the_agent_goes_on_and_resend_delivers_it(pipeline_env, tmp_path):
    topic = pipeline_env["SOURCEWATCH_TOPIC_PREFIX"] + "pages.fetched"
    bootstrap = pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"]
    failing = _page(2).model_copy(update={"url": FAILING_URL, "final_url": FAILING_URL})
    log = tmp_path / "failing-worker.log"
    worker = _start("tests.integration.failing_worker", pipeline_env, log)
    try:
        asyncio.run(_produce(bootstrap, topic, [encode(_page(1)), encode(failing)]))
        letters = _wait_for("SELECT count() > 0 FROM deadletters", [[1]], pipeline_env, timeout=120)
        assert letters == [[1]], log.read_text()[-3000:]
        # Sent after the failure: handled by the same agent, which went on.
        asyncio.run(_produce(bootstrap, topic, [encode(_page(3))]))
        assert _wait_for("SELECT count() FROM links WHERE page_url = 'https://example.org/3'", [[1]],
                         pipeline_env) == [[1]]
        rows = _sql("SELECT topic, reason, value FROM deadletters", pipeline_env)
        # Its batch — the failing page and any page read with it — each kept with the error.
        urls = {json.loads(value)["url"] for _, _, value in rows}
        assert FAILING_URL in urls and urls <= {"https://example.org/1", FAILING_URL}
        for topic_name, reason, _ in rows:
            assert topic_name == "pages.fetched"
            assert reason.startswith(f"extract_links raised RuntimeError: injected fault on {FAILING_URL}")
            assert "Traceback" in reason and "_failing_links_of" in reason
        counted = _wait_for("SELECT sum(value) FROM metrics WHERE name = 'batches_failed' AND stage = "
                            "'extract_links'", [[1]], pipeline_env)
        assert counted == [[1]]
        # The other stages reading the topic handled the page as any other.
        assert _wait_for("SELECT count() FROM fetches", [[3]], pipeline_env) == [[3]]
    finally:
        _stop(worker, log)
    assert _sql(f"SELECT count() FROM links WHERE page_url = '{FAILING_URL}'", pipeline_env) == [[0]]

    # The fault mended (a worker without it), the failed batch is sent again and handled.
    log = tmp_path / "worker.log"
    worker = _start("streams.cli", pipeline_env, log)
    try:
        resent = cli_json(["resend"], pipeline_env)
        assert resent["dead_letters"] == len(rows) and resent["resent"] == len(rows) and not resent["gone"]
        assert resent["stages"] == {"extract_links": len(rows)}
        assert _wait_for(f"SELECT count() FROM links WHERE page_url = '{FAILING_URL}'", [[1]],
                         pipeline_env) == [[1]], log.read_text()[-3000:]
        # Read again by every stage, yet counted once; a second resend finds nothing new.
        assert _sql("SELECT count() FROM fetches", pipeline_env) == [[3]]
        assert cli_json(["resend"], pipeline_env)["resent"] == 0
    finally:
        _stop(worker, log)
