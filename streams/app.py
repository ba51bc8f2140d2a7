"""The one Faust app of sourcewatch, configured from the settings.

Topics carry raw bytes; schemas.registry encodes and validates them, so an
invalid message becomes a dead letter with its reason instead of an error deep
inside Faust's codec machinery.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web
from faust.web import drivers as web_drivers

from infra.kafka_broker import bootstrap_address
from infra.kafka_topics import consumer_group, worker_client_id
from infra.settings import get_settings
from streams.consumer_fetch import gathering_fetches
from streams.rebalance import App


class ServingApp(App):
    """The app whose web server also carries routes added before it starts (the service's, from the worker
    command: the same routes as `sourcewatch serve`), with Faust's placeholder index at `/` left out for them,
    and whose consumer gathers its fetches as the settings say (streams.consumer_fetch)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._web_routes: list[Callable[[web.Application], None]] = []

    def add_web_routes(self, add: Callable[[web.Application], None]) -> None:
        self._web_routes.append(add)

    def _new_web(self):
        driver = web_drivers.by_url(self.conf.web)
        # Faust's production index answers `/` with {"status": "OK"}; the dashboard is served there instead.
        without_index = type("Web", (driver,), {"production_blueprints": []})
        return without_index(self)

    def on_webserver_init(self, faust_web) -> None:
        for add in self._web_routes:
            add(faust_web.web_app)

    def _new_consumer(self):
        consumer = super()._new_consumer()
        thread = consumer._thread
        thread._create_worker_consumer = gathering_fetches(
            thread._create_worker_consumer, min_bytes=settings.kafka_fetch_min_bytes,
            max_wait_ms=settings.kafka_fetch_max_wait_ms)
        return consumer


settings = get_settings()
# Faust creates its data dir (below) but not the folders above it.
(settings.home / "faust").mkdir(parents=True, exist_ok=True)

app = ServingApp(
    # Workers in role "sink" are a group of their own: a group's members must all consume the same topics.
    consumer_group(settings.topic_prefix, settings.worker_role),
    broker_client_id=worker_client_id(settings.worker_role),
    broker=f"kafka://{bootstrap_address(settings)}",
    store="memory://",
    # Faust writes its table metadata under the app's data dir; keep it in sourcewatch's home
    # rather than littering the working directory with "<app id>-data" folders.
    datadir=str(settings.home / "faust" / "{conf.name}"),
    key_serializer="raw",
    value_serializer="raw",
    topic_partitions=settings.topic_partitions,
    topic_replication_factor=1,
    web_port=settings.web_port,
    web_bind="127.0.0.1",
    web_host="127.0.0.1",
    producer_max_request_size=settings.kafka_max_message_bytes,
    producer_compression_type="lz4",
    consumer_max_fetch_size=settings.kafka_max_message_bytes,
    broker_session_timeout=settings.kafka_session_timeout_seconds,
    broker_heartbeat_interval=settings.kafka_heartbeat_seconds,
    consumer_group_instance_id=settings.worker_instance_id or None,
    # A group leader that joined while a restarted broker still reported its topics missing assigns nobody
    # any partition, and rejoins only when its metadata next shows them (aiokafka's default: after 5 min).
    consumer_metadata_max_age_ms=10_000,
    stream_buffer_maxsize=settings.stream_buffer_events,
    broker_commit_every=500,
    broker_commit_interval=1.0,
    # Faust would otherwise import every module it finds; agents are loaded by streams.worker.
    autodiscover=False,
)
