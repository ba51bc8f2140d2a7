"""Commands that start work run beside a running worker, as users run the service: `crawl`, `discover` and
`watch --run` produce to it and follow through ClickHouse and the group's lag, instead of refusing (the worker
holds the embedded chDB) or starting a worker of their own."""

from __future__ import annotations

import time

import pytest

from infra.processes import serve_in_child
from jobs.simweb_control import simulated_clock
from tests.conftest import cli_json
from tests.integration.test_records_pipeline import _control
from tests.integration.test_service import _start_worker, _stop_worker
from tests.integration.test_worker_roles import _members

pytestmark = pytest.mark.kafka


def test_crawl_discover_and_watch_run_on_the_running_worker(pipeline_env):
    env = dict(pipeline_env)
    with serve_in_child(["simweb", "--sites", "3", "--seed", "11", "--speed", "3600"], env) as web:
        env |= simulated_clock(web["control"])
        truth = _control(web["control"] + "/__truth__")
        homepages = list(web["sites"].values())
        worker = _start_worker(env)
        try:
            # In the group, not merely started: a command that finds no member runs a worker of its own.
            deadline = time.monotonic() + 90
            while not _members(env, "all") and time.monotonic() < deadline:
                time.sleep(1)
            crawl = cli_json(["crawl", "--seeds", homepages[0], "--max-pages", "30"], env, timeout=240)
            assert crawl["workers"] == "running"
            assert crawl["pages_fetched"] == crawl["clickhouse_fetch_rows"] >= 10 and crawl["pages_ok"] > 0
            found = cli_json(["discover", homepages[1]], env, timeout=240)
            assert found["workers"] == "running" and len(found["episodes"]) == 1
            listing = next(source["url"] for source in truth[next(iter(truth))]["source_pages"])
            watched = cli_json(["watch", listing, "--run", "10"], env, timeout=120)
            assert watched["workers"] == "running" and watched["decisions"] >= 3  # hourly ticks, 1 s apart
            assert worker.poll() is None  # the worker served them all and is still running
        finally:
            _stop_worker(worker)

