"""Every panel of the Grafana dashboard (infra/grafana) runs on the tables sourcewatch creates: its SQL, with
the ClickHouse plugin's macros expanded as the plugin expands them, executed on a migrated chDB with rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from infra.clickhouse import ClickHouse

GRAFANA = Path(__file__).resolve().parents[3] / "infra" / "grafana"


def expand_macros(sql: str) -> str:
    """The plugin's $__timeFilter and $__timeInterval for a range from 6 hours ago to a minute from now (the
    range ends when the dashboard is loaded, after the rows were written) in 60-s buckets."""
    sql = re.sub(r"\$__timeFilter\((\w+)\)",
                 r"\1 >= now() - INTERVAL 6 HOUR AND \1 <= now() + INTERVAL 1 MINUTE", sql)
    return re.sub(r"\$__timeInterval\((\w+)\)", r"toStartOfInterval(toDateTime(\1), INTERVAL 60 second)", sql)


@pytest.fixture(scope="module")
def clickhouse(tmp_path_factory):
    from service.bench import fill

    store = ClickHouse(f"chdb://{tmp_path_factory.mktemp('grafana') / 'clickhouse'}")
    store.migrate()
    fill(store, sources=200, records=2000, items=300)
    yield store
    store.close()


def test_every_panel_query_runs_and_the_provisioning_names_the_dashboards_datasource(clickhouse):
    dashboard = json.loads((GRAFANA / "sourcewatch-dashboard.json").read_text())
    targets = [target for panel in dashboard["panels"] for target in panel["targets"]]
    assert len(targets) >= 8
    answered = 0
    for target in targets:
        assert target["datasource"]["type"] == "grafana-clickhouse-datasource"
        _, rows = clickhouse.query(expand_macros(target["rawSql"]))  # a broken query raises
        answered += bool(rows)
    assert answered >= 6  # the synthetic rows fill all but the discovery, revisit and webhook panels
    assert "$__" not in expand_macros(" ".join(target["rawSql"] for target in targets))
    provisioned = (GRAFANA / "provisioning" / "datasources" / "sourcewatch-clickhouse.yaml").read_text()
    assert f"uid: {targets[0]['datasource']['uid']}" in provisioned
