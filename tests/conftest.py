"""Shared fixtures: the evaluation data, a real local Kafka broker, the CLI as users run it, and small aiohttp
apps served on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from infra.kafka_broker import KafkaSetupError, LocalKafka, first_free_port
from infra.kafka_topics import delete_topics, topic_partitions
from infra.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
# `make test` runs the suite in several processes (pytest-xdist): each looks for free ports from a range of its
# own, so that two never take the same port between one's search and its bind.
PORT_OFFSET = 500 * int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


# Tests that train or evaluate models with torch's threads on every core: `make test` (--dist loadgroup) runs
# them one after another in one process. Two at once on 2 cores crawl — each pool's threads spin waiting for
# a core the other holds: discovery's fine-tuning ran past 600 s beside the cold-start evaluation (465 s;
# 171 s and 70 s alone).
TRAINING = pytest.mark.xdist_group("training")


def free_port(start: int) -> int:
    """The first free loopback port from START, in this test process's own range."""
    return first_free_port(start + PORT_OFFSET)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = Settings().data
    if not (path / "sites").is_dir():
        pytest.skip(f"evaluation data not unpacked at {path} (run `make setup` with ../shared beside the checkout)")
    return path


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real single-node KRaft broker for the test session, on its own port and data dir."""
    settings = Settings()
    broker = LocalKafka(
        settings.kafka_libs,
        tmp_path_factory.mktemp("kafka"),
        port=free_port(19092),
        heap_mb=512,
    )
    try:
        state = broker.start()
    except KafkaSetupError as error:
        pytest.fail(f"the local Kafka broker did not start: {error}")
    yield state.bootstrap
    broker.stop()


@pytest.fixture
def pipeline_env(kafka_bootstrap: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment for a CLI run on the test broker: its own topics, chDB and web port. The topics are deleted
    after the test: the session's broker would otherwise gather every test's (~36 each), and every client of it
    decodes them all in each metadata answer, later tests paying for earlier ones."""
    env = make_pipeline_env(kafka_bootstrap, tmp_path)
    yield env
    try:
        asyncio.run(delete_topics(kafka_bootstrap, env["SOURCEWATCH_TOPIC_PREFIX"]))
    except Exception as error:  # the test's own outcome stands; the leftover is only slower for the next ones
        warnings.warn(f"the test's topics were not deleted: {error!r}")


def make_pipeline_env(kafka_bootstrap: str, tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SOURCEWATCH_")}
    env.update(
        SOURCEWATCH_DATA=str(Settings().data.absolute()),
        SOURCEWATCH_KAFKA_BOOTSTRAP=kafka_bootstrap,
        SOURCEWATCH_TOPIC_PREFIX=f"t{uuid.uuid4().hex[:10]}.",
        SOURCEWATCH_TOPIC_PARTITIONS="4",
        SOURCEWATCH_CLICKHOUSE_DSN=f"chdb://{tmp_path / 'clickhouse'}",
        SOURCEWATCH_PAGE_INDEX=str(tmp_path / "pages.sqlite"),
        SOURCEWATCH_WEB_PORT=str(free_port(16066)),
        # Every run its own home: its Faust tables, API token and webhook secret, apart from other tests'.
        SOURCEWATCH_HOME=str(tmp_path / "home"),
        SOURCEWATCH_ALLOW_LOOPBACK="true",
        SOURCEWATCH_PER_HOST_DELAY_SECONDS="0",
        SOURCEWATCH_PER_HOST_CONCURRENCY="8",
        SOURCEWATCH_SINK_FLUSH_SECONDS="0.3",
    )
    return env


def run_cli(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `sourcewatch ARGS` as a user would, in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "streams.cli", *args], env=env, cwd=ROOT, capture_output=True, text=True,
        timeout=timeout,
    )


def cli_json(args: list[str], env: dict[str, str], timeout: float = 300):
    result = run_cli([*args, "--json"], env, timeout)
    assert result.returncode == 0, f"sourcewatch {' '.join(args)} failed:\n{result.stderr[-3000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def broker_topics(bootstrap: str) -> list[str]:
    """Every topic on the broker."""
    return list(asyncio.run(topic_partitions(bootstrap)))


@asynccontextmanager
async def serving_app(app: web.Application) -> AsyncIterator[str]:
    """Serve an aiohttp app on a free loopback port: its base URL (no trailing slash)."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    finally:
        await runner.cleanup()
