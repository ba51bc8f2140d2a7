"""The service's aiohttp application and its server (`sourcewatch serve`)."""

from __future__ import annotations

import logging

from aiohttp import web

from infra.api_access import AccessRule, LOOPBACK_NAMES
from infra.kafka_broker import first_free_port
from infra.settings import Settings
from service.access import access_middleware
from service.api import Api
from service.dashboard import Dashboard, missing_assets
from service.feeds import FeedRoutes
from service.openapi import openapi_document
from service.prometheus import prometheus_metrics
from service.reader import Reader, Unreadable

log = logging.getLogger(__name__)


@web.middleware
async def unreadable_as_503(request: web.Request, handler):
    """ClickHouse not answering (a worker starting or stopping, a server down) is a 503 that says why."""
    try:
        return await handler(request)
    except Unreadable as error:
        log.warning("%s %s: ClickHouse did not answer: %s", request.method, request.path, error)
        return web.json_response({"error": f"the stored data could not be read: {error}"}, status=503,
                                 headers={"Retry-After": "5"})


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


def add_service(app: web.Application, settings: Settings, reader: Reader | None = None,
                check_every_path: bool = True) -> None:
    """The service's routes and checks on `app`: its own server (`sourcewatch serve`: the access rule on every
    path, so an unknown one without the token is refused, not told apart from a known one) or a worker's web
    server (`check_every_path` False: on the service's routes; the worker's own, `/sql/`, check themselves).
    `reader`: how it reads ClickHouse (default: as `sourcewatch sql` does)."""
    reader = reader or Reader(settings)
    api, dashboard = Api(reader), Dashboard(reader)
    feeds = FeedRoutes(api)
    document = openapi_document()
    router = app.router
    before = set(router.resources())
    router.add_get("/healthz", _health)
    router.add_get("/", dashboard.page)
    router.add_get("/sources/{id}", dashboard.page)
    router.add_get("/assets/{name}", dashboard.asset)
    router.add_get("/api/v1/dashboard", dashboard.data)
    router.add_get("/api/v1/openapi.json", lambda request: web.json_response(document))
    router.add_get("/api/v1/sources", api.sources)
    router.add_get("/api/v1/sources/{id}", api.source)
    router.add_get("/api/v1/sources/{id}/records", api.records)
    router.add_get("/api/v1/sources/{id}/items", api.items)
    router.add_get("/api/v1/sources/{id}/figures", api.figures)
    router.add_get("/api/v1/items", api.items)
    router.add_get("/api/v1/expansions", api.expansions)
    router.add_get("/api/v1/discovery/gave-up", api.gave_up)
    router.add_post("/api/v1/watch", api.watch)
    router.add_delete("/api/v1/watch", api.stop_watching)
    router.add_post("/api/v1/sources/{id}/verdict", api.verdict)
    router.add_post("/api/v1/sites/verdict", api.site_verdict)
    router.add_get(r"/feeds/items.{form:atom|json}", feeds.feed)
    router.add_get(r"/feeds/sources/{id}.{form:atom|json}", feeds.feed)
    router.add_get("/metrics", lambda request: prometheus_metrics(request, reader))
    own = None if check_every_path else frozenset(set(router.resources()) - before)
    app.middlewares.extend([access_middleware(AccessRule.from_settings(settings), own), unreadable_as_503])


def add_worker_service(app: web.Application, settings: Settings) -> None:
    """The service on a worker's web server. A worker holding the store (role all or sink) reads through its
    own client (the embedded chDB answers one process: this one); a processing worker reads as `sql` does."""
    reader = None
    if settings.worker_role != "process":
        from agents.sink import store

        reader = Reader(settings, lambda query: store().read_async(query))
    if missing := missing_assets():
        log.warning("the dashboard's chart library is missing (%s): run `make setup`", missing[0])
    add_service(app, settings, reader, check_every_path=False)


def build_app(settings: Settings) -> web.Application:
    app = web.Application()
    add_service(app, settings)
    return app


class Service:
    """The service on `host` at the first free port from `port`: start() → its URL; stop()."""

    def __init__(self, settings: Settings, host: str | None = None, port: int | None = None) -> None:
        self.settings = settings
        self.host = host or settings.serve_host
        self.port = port or settings.serve_port
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> str:
        if self.host not in LOOPBACK_NAMES and not self.settings.api_token:
            raise ValueError(f"serving on {self.host} (not loopback) needs SOURCEWATCH_API_TOKEN set")
        if missing := missing_assets():
            raise FileNotFoundError(f"the dashboard's chart library is missing ({missing[0]}): run `make setup`")
        self._runner = web.AppRunner(build_app(self.settings), access_log=None)
        await self._runner.setup()
        port = first_free_port(self.port)
        await web.TCPSite(self._runner, self.host, port).start()
        self.url = f"http://{self.host}:{port}/"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
