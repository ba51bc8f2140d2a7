"""The dashboard: `/` (everything at a glance), `/sources/{id}` (one source page), their assets, and the one
JSON answer their scripts poll, `/api/v1/dashboard?hours=H`.

The pages are static files (service/static); charts are drawn by uPlot, installed from npm at set-up
(`make setup`), never fetched from a CDN. Every panel's query is fixed (infra.queries.dashboard_panels).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from infra import queries
from infra.kafka_broker import bootstrap_address
from infra.kafka_topics import consumer_group, lag_by_topic
from service.api import json_response, validated
from service.reader import Reader

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
UPLOT = STATIC / "node_modules" / "uplot" / "dist"
ASSETS = {"dashboard.js": "text/javascript", "dashboard.css": "text/css", "source.js": "text/javascript"}
VENDOR = {"uPlot.iife.min.js": "text/javascript", "uPlot.min.css": "text/css"}
# About this many buckets per chart, whatever the range; each a length that divides a day, so ClickHouse's
# buckets and the grid drawn here line up.
BUCKETS = 60
STEPS = (10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
# Sites discovery gave up on, shown for a person's verdict (whatever the range: they wait for one).
GAVE_UP = 50
# The charted panels, and the columns of each that count (an empty bucket is 0; a latency is unknown there).
SERIES = {"fetches": ("pages",), "new_items": ("items",), "revisits": ("decisions", "fetches")}


class DashboardQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hours: float = Field(6, gt=0, le=24 * 90)


def on_grid(rows: list[dict], start: float, end: float, step: int, counts: tuple[str, ...]) -> list[dict]:
    """A chart's rows on every bucket from `start` to `end`, so its axis spans the range asked for: a bucket
    with no row counts 0 and measures nothing (None)."""
    by_time = {row["t"]: row for row in rows}
    columns = [key for key in (rows[0] if rows else {}) if key != "t"] or list(counts)
    first = int(start // step) * step
    return [by_time.get(t) or {"t": t, **{key: 0 if key in counts else None for key in columns}}
            for t in range(first, int(end) + 1, step)]


def missing_assets() -> list[str]:
    return [str(UPLOT / name) for name in VENDOR if not (UPLOT / name).is_file()]


class Dashboard:
    def __init__(self, reader: Reader) -> None:
        self.reader = reader

    async def page(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / ("source.html" if "id" in request.match_info else "index.html"))

    async def asset(self, request: web.Request) -> web.FileResponse:
        name = request.match_info["name"]
        if name in ASSETS:
            return web.FileResponse(STATIC / name, headers={"Content-Type": ASSETS[name]})
        if name in VENDOR:
            return web.FileResponse(UPLOT / name, headers={"Content-Type": VENDOR[name]})
        raise web.HTTPNotFound()

    async def _lag(self) -> dict[str, int] | str:
        settings = self.reader.settings
        try:
            lags = await asyncio.wait_for(lag_by_topic(bootstrap_address(settings),
                                                       consumer_group(settings.topic_prefix)), 10)
        except Exception as error:  # the broker down: the panel says so, the rest still shows
            log.warning("consumer lag not read: %s", error)
            return f"not read: {error}"
        return {topic.removeprefix(settings.topic_prefix): lag for topic, lag in sorted(lags.items())}

    async def data(self, request: web.Request) -> web.Response:
        asked = validated(DashboardQuery, request.query)
        seconds = int(asked.hours * 3600)
        step = next((step for step in STEPS if step * BUCKETS >= seconds), STEPS[-1])
        started, now = time.monotonic(), time.time()
        panels = queries.dashboard_panels(seconds, step)
        sources = queries.sources_page("", 500, 0, sure_at=self.reader.settings.find_sure_at)
        answers = await asyncio.gather(*(self.reader.rows(query) for query in panels.values()),
                                       self.reader.rows(sources), self.reader.rows(queries.gave_up_page(GAVE_UP, 0)),
                                       self._lag())
        body = dict(zip(panels, answers[:len(panels)]))
        for name, counts in SERIES.items():
            body[name] = on_grid(body[name], now - seconds, now, step, counts)
        body.update(sources=answers[len(panels)], gave_up=answers[len(panels) + 1], lag=answers[-1], step=step,
                    hours=asked.hours, query_ms=round((time.monotonic() - started) * 1000, 1))
        return json_response(body)
