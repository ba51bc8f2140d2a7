"""Run a Faust worker in this process, with the agents of its role loaded.

`sourcewatch worker` runs one until stopped; `sourcewatch crawl` runs one with
a driver task that seeds the crawl and stops the worker when the crawl is done.
More workers with the same settings join the same consumer groups. A worker's
role (settings.worker_role) says which agents: "all" of them; "process" all but
the ClickHouse sink; "sink" the sink alone, in a consumer group of its own (a
group's members must all read the same topics: one that reads fewer would be
given partitions it never processes). So roles all and process never share
the processing group, and a sink worker never runs beside an all worker.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import pkgutil
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from aiokafka.errors import KafkaError
from aiohttp import web
from mode.utils.times import want_seconds

import agents
from infra.api_access import settings_token
from infra.kafka_broker import bootstrap_address, first_free_port
from infra.kafka_topics import TopicDeclaration, consumer_group, ensure_topics, group_members, worker_client_id
from infra.settings import get_settings
from infra.sql_owner import chdb_owner, release_chdb
from streams.broker_outage import PROBE_SECONDS, BrokerOutage
from streams.faust_logs import quiet_normal_working
from streams.gpu_libraries import release_gpu_code
from streams.heap import freeze_loaded
from streams.malloc import return_freed_memory
from streams.stop_deadline import graceful_stop_within
from streams.threads import threads_for_reading

if TYPE_CHECKING:
    import faust

log = logging.getLogger(__name__)
T = TypeVar("T")


# The modules only the worker that owns the stores runs (the ClickHouse sink and the page index: one writer
# each on one machine); a sink worker runs them and its metrics flush, a processing worker everything else.
STORE_MODULES = ("agents.sink", "agents.index_pages")
SINK_MODULES = (*STORE_MODULES, "agents.flush_metrics")


def load_agents(role: str = "all") -> list[str]:
    """Import the agent modules of this role (each registers its agents on the app)."""
    names = [module.name for module in pkgutil.walk_packages(agents.__path__, "agents.")]
    if role == "sink":
        names = list(SINK_MODULES)
    elif role == "process":
        names = [name for name in names if name not in STORE_MODULES]
    for name in names:
        importlib.import_module(name)
    return names


def changelog_topics(app: faust.App) -> list[TopicDeclaration]:
    """Each table's changelog topic, configured as Faust configures it, to be created before the worker joins
    its group. Faust creates the changelogs itself while the worker starts, after its consumer took its first
    view of the cluster; a table write checked against that view (a changelog of 0 partitions) crashed its
    agent and dropped the events it held — 92 watched pages of a 2,000-site soak never read (2026-11-26)."""
    declarations = []
    for table in app.tables.values():
        topic = table.changelog_topic
        flags = [flag for flag, on in (("compact", topic.compacting), ("delete", topic.deleting)) if on]
        config = {"cleanup.policy": ",".join(flags)} if flags else {}
        if topic.retention:
            config["retention.ms"] = str(int(want_seconds(topic.retention) * 1000))
        declarations.append(TopicDeclaration(topic.get_topic_name(), topic.partitions or app.conf.topic_partitions,
                                             config))
    return declarations


async def role_conflict(bootstrap: str, prefix: str, role: str) -> str | None:
    """Why a worker in this role may not join the workers running now, or None."""
    processing = await group_members(bootstrap, consumer_group(prefix))
    other = "process" if role == "all" else "all"
    running = processing.count(worker_client_id(other))
    if running and role == "sink":
        return ("a worker in role all is running (it has its own sink): stop it and run workers in role process "
                "beside this sink")
    if running:
        return (f"a worker in role {other} is running ({running} in the group): a {role} worker may not run "
                f"beside it; stop it, or start this one as --role {other}")
    if role == "all" and await group_members(bootstrap, consumer_group(prefix, "sink")):
        return "a worker in role sink is running: start this one as --role process"
    return None


def _with_broker(bootstrap: str, wait_seconds: float, request: Callable[[], Awaitable[T]]) -> T:
    """A start-up request to the broker, asked again while the broker does not answer (it is starting or
    restarting) for up to wait_seconds; then the worker stops with the reason."""
    began = time.monotonic()
    pause = 1.0
    while True:
        try:
            return asyncio.run(request())
        except (KafkaError, OSError) as error:
            waited = time.monotonic() - began
            if waited >= wait_seconds:
                raise SystemExit(f"error: Kafka at {bootstrap} did not answer for {waited:.0f} s ({error}): start "
                                 "it (`sourcewatch kafka start`) or set SOURCEWATCH_KAFKA_BOOTSTRAP") from error
            log.warning("Kafka at %s does not answer (%s); asking again for up to %.0f s more", bootstrap,
                        error or type(error).__name__, wait_seconds - waited)
            time.sleep(pause)
            pause = min(pause * 2, 10.0)


def run_worker(driver: Callable[[], Awaitable[None]] | None = None, loglevel: str | None = None,
               web_routes: Callable[[web.Application], None] | None = None) -> int:
    """Run the worker until stopped (or until `driver` returns); the exit code. Its log level follows the
    command's (`sourcewatch -v …`: info) unless given; `web_routes` adds routes to its web server."""
    # Before the stages' threads and models allocate.
    return_freed_memory(get_settings().worker_map_large_blocks)
    from faust.worker import Worker

    from streams.app import app, settings

    role = settings.worker_role
    bootstrap = bootstrap_address(settings)
    conflict = _with_broker(bootstrap, settings.kafka_start_wait_seconds,
                            lambda: role_conflict(bootstrap, settings.topic_prefix, role))
    if conflict is not None:
        raise SystemExit(f"error: {conflict}")
    owner = chdb_owner(settings.clickhouse_dsn) if role != "process" else None
    if owner is not None:
        # Fail at start-up with what to do, rather than inside the sink agent later.
        raise SystemExit(f"error: the embedded ClickHouse ({settings.clickhouse_dsn}) is held by worker process "
                         f"{owner['pid']}: stop it, start this one as --role process beside it, or point "
                         "SOURCEWATCH_CLICKHOUSE_DSN at a ClickHouse server to run several sinks")
    if role != "sink":
        # Before the stages import torch for their models, so its GPU libraries never add to the peak.
        release_gpu_code()
    load_agents(role)
    if web_routes is not None:
        app.add_web_routes(web_routes)
    if role != "sink":
        from agents.discover import model_files

        for what, path in model_files().items():
            if not path.is_file():
                raise SystemExit(f"error: no {what} at {path}: set it in the settings, or train one with "
                                 f"`sourcewatch train {'discovery' if 'agent' in what else 'classifier'}`")
    settings_token(settings)  # created on first start, so the CLI can read it before the first request
    _with_broker(bootstrap, settings.kafka_start_wait_seconds,
                 lambda: ensure_topics(bootstrap, settings.topic_prefix, settings.topic_partitions,
                                       changelog_topics(app)))
    asyncio.set_event_loop(asyncio.new_event_loop())
    outage = BrokerOutage(bootstrap)
    outage.install()
    quiet_normal_working()
    app.timer(interval=PROBE_SECONDS)(outage.probe)
    app.conf.web_port = first_free_port(settings.web_port)
    if web_routes is not None:
        print(f"dashboard and data API on http://127.0.0.1:{app.conf.web_port}/", file=sys.stderr, flush=True)
    if loglevel is None:
        loglevel = "info" if logging.getLogger().isEnabledFor(logging.INFO) else "warning"
    worker = Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
    worker.spinner = None  # it writes cursor escapes into logs and pipes
    failure: list[BaseException] = []

    if driver is not None:

        @app.task
        async def drive() -> None:
            try:
                await driver()
            except Exception as exc:  # reported after the worker stops, and the exit code says so
                log.exception("crawl driver failed")
                failure.append(exc)
            finally:
                # Mode's own graceful path, as on SIGTERM: stop services, then the loop.
                worker._schedule_shutdown(signal.SIGTERM)

    threads_for_reading()
    freeze_loaded()  # the agents and their libraries, imported above
    try:
        with graceful_stop_within(worker, settings.worker_stop_seconds):
            worker.execute_from_commandline()
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    finally:
        if role != "process":
            from agents.sink import close_store

            close_store()
            release_chdb(settings.clickhouse_dsn, os.getpid())
    return 1 if failure else code
