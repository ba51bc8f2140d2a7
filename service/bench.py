"""`sourcewatch bench service`: the service's latency on a store the size of a real deployment.

A fresh chDB is filled with synthetic rows by ClickHouse itself (INSERT … SELECT FROM numbers(); the rows'
shapes are the sink's): `sources` source pages, `records` records spread over them, new items, each page's
live figures and a day of fetches. A real worker on the local broker then holds it — the way users run the
service, beside a worker that answers its queries — and each main route is timed over `requests`
sequential calls (after two warm-up calls), then the dashboard's first paint in headless Chromium.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp

from infra.api_access import settings_token
from infra.clickhouse import ClickHouse
from infra.kafka_broker import bootstrap_address, first_free_port
from infra.queries import REVISIT_FIGURES
from infra.settings import get_settings
from infra.sql_owner import chdb_owner

_NOW = "now64(3)"


def _page(n: str, sites: int) -> str:
    """SQL for the URL of synthetic source page number `n`."""
    return f"concat('https://site', toString({n} % {sites}), '.example/events/', toString({n}))"


def _site(n: str, sites: int) -> str:
    return f"concat('site', toString({n} % {sites}), '.example')"


def fill(clickhouse: ClickHouse, sources: int, records: int, items: int) -> None:
    """Synthetic rows of `sources` pages on sources/100 sites: their records, new items, figures, fetches."""
    sites = max(1, sources // 100)
    figures = "['" + "', '".join(REVISIT_FIGURES) + "']"
    for statement in (
        f"""INSERT INTO sources_store (event_id, site, crawl_id, url, kind, score, clicks, created_at)
            SELECT toString(number), {_site('number', sites)}, 'bench', {_page('number', sites)}, 'listed', 0.9, 3,
                   {_NOW} - toIntervalSecond(number) FROM numbers({sources})""",
        f"""INSERT INTO records_store (site, source_url, item_url, title, date, snippet, place, page_url, position,
                                       first_seen, last_seen)
            SELECT {_site('p', sites)}, {_page('p', sites)}, concat('https://example.org/item/', toString(number)),
                   concat('Record ', toString(number)), {_NOW} - toIntervalHour(number % 5000),
                   concat('Snippet of record ', toString(number)), if(number % 3 = 0, 'Town hall', ''),
                   {_page('p', sites)}, toUInt32(number % 200),
                   {_NOW} - toIntervalMinute(number % 50000), {_NOW}
            FROM (SELECT number, number % {sources} AS p FROM numbers({records}))""",
        f"""INSERT INTO changes_store (event_id, site, crawl_id, source_url, page_url, item_url, title, date,
                                       first_seen, created_at)
            SELECT concat('item', toString(number)), {_site('p', sites)}, 'bench', {_page('p', sites)},
                   {_page('p', sites)}, concat('https://example.org/new/', toString(number)),
                   concat('New item ', toString(number)), NULL, {_NOW} - toIntervalSecond(number), {_NOW}
            FROM (SELECT number, number % {sources} AS p FROM numbers({items}))""",
        f"""INSERT INTO metrics_store (event_id, worker, name, stage, value, kind, labels, created_at)
            SELECT concat('m', toString(number)), 'bench', {figures}[number % {len(REVISIT_FIGURES)} + 1], 'revisit',
                   (number % 100) / 100, 'gauge', map('source', {_page(f'intDiv(number, {len(REVISIT_FIGURES)})', sites)}),
                   {_NOW} - toIntervalSecond(number % 3600)
            FROM numbers({sources * len(REVISIT_FIGURES)})""",
        f"""INSERT INTO fetches_store (event_id, site, crawl_id, url, final_url, depth, reason, status, error,
                                       error_detail, not_modified, content_type, encoding, body_bytes, truncated,
                                       redirects, attempts, fetch_ms, fetched_at)
            SELECT concat('f', toString(number)), 'site.example', 'bench', 'https://site.example/',
                   'https://site.example/', 0, 'revisit', if(number % 50 = 0, 503, 200),
                   if(number % 50 = 0, 'http_error', 'none'), '', 0, 'text/html', 'utf-8', 40000, 0, 0, 1,
                   50 + number % 400, {_NOW} - toIntervalSecond(number % 86400)
            FROM numbers({sources * 10})""",
    ):
        clickhouse.client.command(statement)


def _summary(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered), 1),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 1), "n": len(ordered)}


async def _time_routes(url: str, token: str, routes: dict[str, str], requests: int) -> dict[str, dict]:
    timings = {}
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:
        for name, path in routes.items():
            samples, size = [], 0
            for index in range(requests + 2):
                started = time.perf_counter()
                try:
                    async with session.get(url + path) as response:
                        body = await response.read()
                except aiohttp.ClientError as error:
                    raise RuntimeError(f"{path} (request {index + 1}): {error}") from error
                if response.status != 200:
                    raise RuntimeError(f"{path}: HTTP {response.status}: {body[:300]!r}")
                if index >= 2:
                    samples.append((time.perf_counter() - started) * 1000)
                size = len(body)
            timings[name] = _summary(samples) | {"bytes": size}
    return timings


async def _first_paint(url: str, token: str, runs: int) -> dict:
    from playwright.async_api import async_playwright

    from models.discovery.anchor_boxes import BROWSER_ARGS

    samples = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(get_settings().chromium), args=BROWSER_ARGS)
        for _ in range(runs):
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            started = time.perf_counter()
            await page.goto(f"{url}?token={token}")
            await page.wait_for_selector("#panel-sources tbody tr", timeout=60000)
            samples.append((time.perf_counter() - started) * 1000)
            await page.close()
        await browser.close()
    return _summary(samples)


def bench_service(sources: int, records: int, items: int, requests: int,
                  progress: Callable[[str], None] = lambda line: None) -> dict:
    from service.app import Service

    settings = get_settings()
    with tempfile.TemporaryDirectory(prefix="sourcewatch-bench-service-") as workdir:
        dsn = f"chdb://{Path(workdir) / 'clickhouse'}"
        started = time.monotonic()
        clickhouse = ClickHouse(dsn)
        clickhouse.migrate()
        fill(clickhouse, sources, records, items)
        clickhouse.close()
        progress(f"filled {sources} sources, {records} records, {items} new items in "
                 f"{time.monotonic() - started:.0f} s; starting a worker")
        env = os.environ | {"SOURCEWATCH_KAFKA_BOOTSTRAP": bootstrap_address(settings),
                            "SOURCEWATCH_TOPIC_PREFIX": f"benchservice{int(time.time())}.",
                            "SOURCEWATCH_CLICKHOUSE_DSN": dsn,
                            "SOURCEWATCH_WEB_PORT": str(first_free_port(settings.web_port + 200))}
        worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "error"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 180
            while chdb_owner(dsn) is None:
                if worker.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the worker did not take the bench's chDB")
                time.sleep(1)
            served = settings.model_copy(update={"clickhouse_dsn": dsn, "topic_prefix": env["SOURCEWATCH_TOPIC_PREFIX"]})
            return asyncio.run(_measure(Service(served), settings_token(served), requests, progress)) | {
                "sources": sources, "records": records, "new_items": items, "requests_per_route": requests}
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=90)


async def _measure(service, token: str, requests: int, progress) -> dict:
    url = await service.start()
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:
            async with session.get(url + "api/v1/sources?limit=1&search=/events/77") as response:
                source_id = (await response.json())["sources"][0]["id"]
            async with session.get(url + "api/v1/items?limit=1000") as response:
                middle = (await response.json())["next"]
        routes = {
            "GET /api/v1/sources?limit=50": "api/v1/sources?limit=50",
            "GET /api/v1/sources/{id}": f"api/v1/sources/{source_id}",
            "GET /api/v1/sources/{id}/records?limit=50": f"api/v1/sources/{source_id}/records?limit=50",
            "GET /api/v1/items?limit=100 (from the start)": "api/v1/items?limit=100",
            "GET /api/v1/items?since=…&limit=100 (mid-way)": f"api/v1/items?since={middle}&limit=100",
            "GET /feeds/items.atom?since=&limit=1000": "feeds/items.atom?since=&limit=1000",
            "GET /feeds/items.json?since=&limit=1000": "feeds/items.json?since=&limit=1000",
            "GET /api/v1/dashboard?hours=6 (one refresh)": "api/v1/dashboard?hours=6",
            "GET /metrics": "metrics",
            "GET /metrics?per_source=true": "metrics?per_source=true",
        }
        progress(f"timing {len(routes)} routes × {requests} requests")
        timings = await _time_routes(url, token, routes, requests)
        progress("the dashboard's first paint in Chromium")
        paint = await _first_paint(url, token, runs=5)
    finally:
        await service.stop()
    return {"routes": timings, "dashboard_first_paint": paint}


def print_report(report: dict) -> None:
    print(f"{report['sources']} sources, {report['records']} records, {report['new_items']} new items; "
          f"{report['requests_per_route']} requests per route")
    for name, timing in report["routes"].items():
        print(f"  {name:48s} p50 {timing['p50_ms']:8.1f} ms  p99 {timing['p99_ms']:8.1f} ms  {timing['bytes']:>9} B")
    paint = report["dashboard_first_paint"]
    print(f"  dashboard first paint (Chromium, {paint['n']} loads)    p50 {paint['p50_ms']:8.1f} ms  "
          f"p99 {paint['p99_ms']:8.1f} ms")
