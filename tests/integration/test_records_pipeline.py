"""Records and new items through the real broker into a real chDB, on the simulated web with its clock held."""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime

import pytest

from infra.processes import serve_in_child
from tests.conftest import cli_json

pytestmark = pytest.mark.kafka


def _control(url: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def _watched_source(truth: dict) -> dict:
    """A one-page source page (the whole list read every time) with an item still to come."""
    for site in truth.values():
        for source in site["source_pages"]:
            visible = [item for item in source["items"] if item["visible"]]
            if len(source["pages"]) == 1 and 2 <= len(visible) < len(source["items"]):
                return source
    raise AssertionError("the simulated web has no one-page source page with items to come")


def _visible_items(control: str, url: str) -> set[str]:
    sources = (source for site in _control(control + "/__truth__").values() for source in site["source_pages"])
    return {item["url"] for source in sources if source["url"] == url for item in source["items"] if item["visible"]}


def test_an_item_added_to_a_source_page_shows_up_once_on_changes_detected(pipeline_env):
    # speed 0: the simulated clock only moves when the test moves it.
    with serve_in_child(["simweb", "--sites", "12", "--seed", "5", "--speed", "0"], pipeline_env) as web:
        control = web["control"]
        source = _watched_source(_control(control + "/__truth__"))
        url = source["url"]

        first = cli_json(["crawl", "--sources", "--seeds", url], pipeline_env)
        assert first["records_read"] >= 2 and first["new_items"] == 0  # the first read only seeds
        records = cli_json(["records", url], pipeline_env)
        visible = {item["url"] for item in source["items"] if item["visible"]}
        assert visible <= {record["item_url"] for record in records}

        upcoming = min((item for item in source["items"] if not item["visible"]), key=lambda i: i["published_at"])
        now = datetime.fromisoformat(_control(control + "/__clock__")["now"])
        hours = (datetime.fromisoformat(upcoming["published_at"]) - now).total_seconds() / 3600
        _control(control + "/__clock__", {"advance_hours": hours + 0.01})
        published = _visible_items(control, url) - visible
        assert upcoming["url"] in published

        second = cli_json(["crawl", "--sources", "--seeds", url], pipeline_env)
        third = cli_json(["crawl", "--sources", "--seeds", url], pipeline_env)  # nothing published since
    assert second["new_items"] == len(published)
    assert third["new_items"] == 0
    changes = cli_json(["sql", "SELECT item_url, source_url, count() AS n FROM changes GROUP BY item_url, source_url"],
                       pipeline_env)
    assert {row["item_url"] for row in changes} == published
    assert all(row["n"] == 1 and row["source_url"] == url for row in changes)
    stored = cli_json(["sql", f"SELECT count() AS n, uniqExact(item_url) AS items FROM records WHERE source_url = '{url}'"],
                      pipeline_env)
    assert stored[0]["items"] == len(visible | published)

