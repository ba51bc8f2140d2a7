"""`/metrics`: the counters and gauges the workers stream to the `metrics` topic, in Prometheus's exposition
format (prometheus_client), read from ClickHouse at each scrape — so every worker's counts are in one place
and a restarted service loses nothing. A counter is its total since the data began
(`sourcewatch_<stage>_<name>_total`), a gauge its latest value. The per-source gauges (each watched page's
live figures, labelled `source`) come only with `?per_source=true`: thousands of watched pages would be tens
of thousands of series per scrape, which Prometheus setups avoid; the data API and the dashboard serve them."""

from __future__ import annotations

import re
from collections import defaultdict

from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from infra import queries
from service.api import refusal
from service.reader import Reader

# Labels whose values change with every flush (a rhythm's peak hours): one series each would never end.
UNBOUNDED_LABELS = frozenset({"peaks"})


def _name(stage: str, name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", f"sourcewatch_{stage}_{name}")


class _Snapshot:
    """A collector over the totals read for one scrape."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def collect(self):
        families: dict[tuple[str, str, str], list[tuple[dict, float]]] = defaultdict(list)
        for row in self.rows:
            labels = {key: value for key, value in (row["labels"] or {}).items() if key not in UNBOUNDED_LABELS}
            families[(row["stage"], row["name"], row["kind"])].append((labels, float(row["total"])))
        for (stage, name, kind), series in families.items():
            label_names = sorted({key for labels, _ in series for key in labels})
            make = GaugeMetricFamily if kind == "gauge" else CounterMetricFamily
            family = make(_name(stage, name), f"{name} ({kind}) of stage {stage}", labels=label_names)
            for labels, value in series:
                family.add_metric([labels.get(key, "") for key in label_names], value)
            yield family


async def prometheus_metrics(request: web.Request, reader: Reader) -> web.Response:
    flag = request.query.get("per_source", "false").lower()
    if flag not in ("true", "false", "1", "0"):
        raise refusal(web.HTTPBadRequest, "per_source is true or false")
    rows = await reader.rows(queries.metric_totals(per_source=flag in ("true", "1")))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(rows))
    return web.Response(body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST})
