"""Workers in roles, as users scale out on one machine: one sink worker owns the embedded chDB, processing
workers share the stages' partitions and table state; a crawl runs on them as on one worker, and goes on when a
processing worker is killed. Mixing a role-all worker into them is refused with what to do."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infra.kafka_broker import first_free_port
from infra.kafka_topics import consumer_group, group_members, worker_client_id
from infra.processes import serve_in_child
from infra.sql_owner import chdb_owner
from tests.conftest import ROOT, cli_json, run_cli
from tests.integration.test_sink_faults import _stop

pytestmark = pytest.mark.kafka


_ports: set[int] = set()


def _start(env: dict[str, str], role: str, log: Path) -> subprocess.Popen:
    # Workers starting at once would each take the first free web port: each gets its own.
    port = first_free_port(int(env["SOURCEWATCH_WEB_PORT"]), exclude=frozenset(_ports))
    _ports.add(port)
    return subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--role", role, "--loglevel", "info"],
                            env=env | {"SOURCEWATCH_WEB_PORT": str(port)}, cwd=ROOT, stdout=log.open("a"),
                            stderr=subprocess.STDOUT, text=True)


def _members(env: dict[str, str], role: str) -> list[str]:
    return asyncio.run(group_members(env["SOURCEWATCH_KAFKA_BOOTSTRAP"],
                                     consumer_group(env["SOURCEWATCH_TOPIC_PREFIX"], role)))


def _wait(condition, what: str, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} never happened:\n{log.read_text()[-3000:]}"
        time.sleep(1)


def test_a_sink_and_processing_workers_crawl_as_one_through_a_killed_worker(pipeline_env, tmp_path):
    env = dict(pipeline_env)
    log = tmp_path / "workers.log"
    with serve_in_child(["simweb", "--sites", "4", "--seed", "5", "--speed", "3600"], env) as web:
        homepages = list(web["sites"].values())
        sink = _start(env, "sink", log)
        first, second = _start(env, "process", log), _start(env, "process", log)
        try:
            _wait(lambda: _members(env, "all").count(worker_client_id("process")) == 2, "two processing workers",
                  log)
            _wait(lambda: _members(env, "sink") == [worker_client_id("sink")], "the sink worker", log)
            refused = run_cli(["worker", "--role", "all"], env, timeout=120)
            assert refused.returncode != 0 and "role process is running" in refused.stderr

            crawl = cli_json(["crawl", "--seeds", *homepages[:2], "--max-pages", "30"], env, timeout=300)
            assert crawl["workers"] == "running" and crawl["pages_ok"] >= 20
            _wait(lambda: chdb_owner(env["SOURCEWATCH_CLICKHOUSE_DSN"])["pid"] == sink.pid, "the sink owning chDB",
                  log)

            # A processing worker dies without a word; the broker gives its partitions (and the frontier's table
            # state with them) to the other once its session times out, and the next crawl completes.
            first.kill()
            first.wait(timeout=30)
            after = cli_json(["crawl", "--seeds", *homepages[2:], "--max-pages", "30"], env, timeout=300)
            assert after["workers"] == "running" and after["pages_ok"] >= 20
            assert _members(env, "all") == [worker_client_id("process")]
        finally:
            for worker in (first, second, sink):
                if worker.poll() is None:
                    _stop(worker, log)
