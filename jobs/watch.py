"""`sourcewatch watch`: add source pages to the revisit watch list, and show how the watched pages are doing.

Adding sends each page to sources.found (as discovery does), keyed by its site like every message, so the
revisit stage of whichever worker owns the site starts watching it at its next tick; a page already watched
is left as it is. The status reads the live figures the revisit stage streams to ClickHouse. With a run
time, this process runs the worker itself for that long and reports the figures at the end.
"""

from __future__ import annotations

import asyncio
import time

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from infra import queries
from infra.kafka_broker import bootstrap_address
from infra.kafka_topics import send_messages
from infra.settings import Settings, get_settings
from infra.sql_owner import read_clickhouse
from models.web.links import canonical_url
from schemas.links import SourceFound
from schemas.sites import site_of


def watch_requests(urls: list[str]) -> list[SourceFound]:
    found = []
    for text in urls:
        url = canonical_url(text.strip())
        if not site_of(url):
            raise ValueError(f"not an absolute http(s) URL: {text!r}")
        found.append(SourceFound(site=site_of(url), url=url, crawl_id="watch", kind="listed", score=1.0, clicks=0))
    return found


async def add_sources(settings: Settings, sources: list[SourceFound]) -> None:
    await send_messages(bootstrap_address(settings), settings.topic_prefix, settings.topic_partitions,
                        [("sources.found", source) for source in sources])


def run_watch(sources: list[SourceFound], seconds: float, show_progress: bool = True) -> tuple[int, dict]:
    """Watch the sources for `seconds` — on the running workers when there are (and the settings allow it),
    else with a worker of this process — and read their figures: (exit code, summary)."""
    from jobs.crawl import workers_running

    settings = get_settings()
    if settings.attach_to_running_workers and asyncio.run(workers_running(settings)):
        return 0, asyncio.run(_watch_on_running_workers(settings, sources, seconds, show_progress))
    return _watch_in_own_worker(sources, seconds, show_progress)


async def _wait(sources: list[SourceFound], seconds: float, show_progress: bool) -> float:
    """Wait out the watch's `seconds` under a progress bar; the moment it began."""
    started = time.monotonic()
    with Progress(TextColumn(f"watching {len(sources)} source pages"), BarColumn(), TimeElapsedColumn(),
                  disable=not show_progress, transient=True) as bar:
        task = bar.add_task("watch", total=seconds)
        while (elapsed := time.monotonic() - started) < seconds:
            bar.update(task, completed=elapsed)
            await asyncio.sleep(0.5)
    return started


def _summary(sources: list[SourceFound], started: float, decided: list[list], columns: list[str],
             rows: list[list]) -> dict:
    watched = {source.url for source in sources}
    return {"seconds": round(time.monotonic() - started, 1), "decisions": decided[0][0], "fetches": decided[0][1],
            "sources": [dict(zip(columns, row)) for row in rows if row[0] in watched]}


async def _watch_on_running_workers(settings: Settings, sources: list[SourceFound], seconds: float,
                                    show_progress: bool) -> dict:
    await add_sources(settings, sources)
    started = await _wait(sources, seconds, show_progress)
    _, decided = await asyncio.to_thread(read_clickhouse, settings,
                                         queries.revisit_decision_counts([source.url for source in sources]))
    columns, rows = await asyncio.to_thread(read_clickhouse, settings, queries.watch_status())
    return _summary(sources, started, decided, columns, rows) | {"workers": "running"}


def _watch_in_own_worker(sources: list[SourceFound], seconds: float, show_progress: bool) -> tuple[int, dict]:
    """Watch the sources with a worker of this process for `seconds`: (exit code, summary)."""
    from agents.flush_metrics import flush
    from agents.sink import store
    from jobs.crawl import metrics_written
    from streams.app import app
    from streams.topics import send
    from streams.worker import run_worker

    summary: dict = {}

    async def drive() -> None:
        for source in sources:
            await send("sources.found", source)
        started = await _wait(sources, seconds, show_progress)
        await flush()
        await metrics_written()
        _, decided = await store().read_async(queries.revisit_decision_counts([source.url for source in sources]))
        columns, rows = await store().read_async(queries.watch_status())
        summary.update(_summary(sources, started, decided, columns, rows) | {"workers": "own"})
        # The watch table's last changes wait in the producer's buffer: sent before the worker stops.
        await app.producer.flush()

    code = run_worker(drive)
    return code, summary
