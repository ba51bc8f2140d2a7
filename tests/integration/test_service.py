"""`sourcewatch serve` beside a real worker on the real broker and chDB, over the simulated web: the new items
the worker stores reach the data API, the Atom feed, the JSON feed and webhooks on loopback, each exactly once
and in order, across a worker restart; the dashboard renders in headless Chromium; the routes refuse callers
without the token."""

from __future__ import annotations

import json
import hashlib
import hmac
import http.server
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import feedparser
import pytest

from infra.processes import serve_in_child
from jobs.simweb_control import simulated_clock
from tests.conftest import ROOT
from tests.integration.test_records_pipeline import _control
from tests.integration.test_revisit_pipeline import _always_fetch_model, _sql

pytestmark = pytest.mark.kafka
SOURCES = 4
# Where the dashboard's screenshots go: docs/ when SOURCEWATCH_SCREENSHOTS names it (they are the README's).
SCREENSHOTS = os.environ.get("SOURCEWATCH_SCREENSHOTS")


def _get(url: str, token: str | None, headers: dict | None = None) -> tuple[int, bytes, dict]:
    request = urllib.request.Request(url, headers={**({"Authorization": f"Bearer {token}"} if token else {}),
                                                   **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


def _json(url: str, token: str) -> dict:
    status, body, _ = _get(url, token)
    assert status == 200, body[:500]
    return json.loads(body)


class _Receiver(http.server.ThreadingHTTPServer):
    """A webhook receiver on loopback: every post's path, headers and body, in arrival order."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict, bytes]] = []

        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts.append((self.path, dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def _start_worker(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "warning"], env=env,
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _stop_worker(worker: subprocess.Popen) -> None:
    worker.send_signal(signal.SIGTERM)
    output, _ = worker.communicate(timeout=90)
    assert worker.returncode == 0, output[-3000:]


def _consume(api: str, token: str, since: str | None, limit: int = 3) -> tuple[list[dict], str | None]:
    """Every item after `since`, paging as an API consumer does; the cursor after them."""
    items = []
    while True:
        page = _json(f"{api}/api/v1/items?limit={limit}" + (f"&since={since}" if since else ""), token)
        items += page["items"]
        since = page["next"]
        if len(page["items"]) < limit:
            return items, since


def _feed_ids(url: str, token: str, parse) -> list[str]:
    """Every item id of a feed, paging forward through its `next` links from the first item."""
    ids, next_url = [], f"{url}?since=&limit=4&token={token}"
    while next_url:
        status, body, _ = _get(next_url, None)
        assert status == 200, body[:500]
        page_ids, next_url = parse(body)
        ids += page_ids
    return ids


def _atom_page(body: bytes) -> tuple[list[str], str | None]:
    feed = feedparser.parse(body)
    assert not feed.bozo, feed.bozo_exception
    return [entry.id for entry in feed.entries], next((link.href for link in feed.feed.links if link.rel == "next"),
                                                      None)


def _json_feed_page(body: bytes) -> tuple[list[str], str | None]:
    feed = json.loads(body)
    assert feed["version"] == "https://jsonfeed.org/version/1.1"
    return [item["id"] for item in feed["items"]], feed.get("next_url")


def test_new_items_reach_the_api_feeds_and_webhooks_once_in_order_and_the_dashboard_renders(pipeline_env, tmp_path):
    receiver = _Receiver()
    env = pipeline_env | {"SOURCEWATCH_REVISIT_MODEL": str(_always_fetch_model(tmp_path / "model.pt")),
                          "SOURCEWATCH_WEBHOOK_URLS": json.dumps([f"{receiver.url}/every"])}
    with serve_in_child(["simweb", "--sites", "8", "--seed", "5", "--speed", "3600"], env) as web:
        env |= simulated_clock(web["control"])
        truth = _control(web["control"] + "/__truth__")
        urls = [source["url"] for site in truth.values() for source in site["source_pages"]][:SOURCES]
        worker = _start_worker(env)
        try:
            with serve_in_child(["serve", "--port", "18366"], env) as served:
                api, token = served["url"].rstrip("/"), Path(served["token_file"]).read_text().strip()
                # Watched through the API, as a user adds a listing page, each with a webhook of its own.
                for index, url in enumerate(urls):
                    asked = {"url": url, "webhook": f"{receiver.url}/own/{index}"}
                    request = urllib.request.Request(f"{api}/api/v1/watch", data=json.dumps(asked).encode(),
                                                     headers={"Authorization": f"Bearer {token}",
                                                              "Content-Type": "application/json"})
                    with urllib.request.urlopen(request, timeout=60) as response:
                        assert response.status == 202
                consumed, since = [], None
                deadline = time.monotonic() + 150
                while len(consumed) < 3 and time.monotonic() < deadline:
                    items, since = _consume(api, token, since)
                    consumed += items
                    time.sleep(2)
                assert len(consumed) >= 3, "no new items reached the API"
                # A worker restart: the consumer goes on from its cursor.
                _stop_worker(worker)
                worker = _start_worker(env)
                # The last page is no longer watched; a person says the first is a source page indeed.
                assert _send(f"{api}/api/v1/watch", token, {"url": urls[-1]}, "DELETE") == 202
                stopped_at = time.time()
                first = _json(f"{api}/api/v1/sources?limit=50", token)["sources"][0]
                assert _send(f"{api}/api/v1/sources/{first['id']}/verdict", token, {"is_source": True}) == 202
                deadline = time.monotonic() + 120
                before = len(consumed)
                while len(consumed) < before + 2 and time.monotonic() < deadline:
                    items, since = _consume(api, token, since)
                    consumed += items
                    time.sleep(2)
                # With the worker stopped nothing more is stored, and the service reads chDB itself.
                _stop_worker(worker)
                time.sleep(4)  # the last items stored settle (service.cursor)
                items, since = _consume(api, token, since)
                consumed += items
                stored = _json(f"{api}/api/v1/sources?limit=50", token)
                _check_items(api, token, consumed, stored)
                _check_stop_and_verdict(stored, urls[-1], stopped_at, first["url"], env)
                _check_webhooks(receiver.posts, consumed, urls, Path(served["token_file"]).parent)
                _check_feeds(api, token, [item["event_id"] for item in consumed])
                _check_source_feed(api, token, stored, consumed)
                _check_refusals(api, token)
                _check_metrics(api, token)
                _check_dashboard(api, token, len(urls), tmp_path)
        finally:
            if worker.poll() is None:
                _stop_worker(worker)


def _check_items(api: str, token: str, consumed: list[dict], stored: dict) -> None:
    ids = [item["event_id"] for item in consumed]
    assert len(ids) == len(set(ids)), "an item was served twice"
    order = [(item["stored_at"], item["event_id"]) for item in consumed]
    assert order == sorted(order)
    # Every stored new item was served: what the consumer read incrementally is what one read from the start
    # gets, and what the sources' counts say.
    again, _ = _consume(api, token, None, limit=50)
    assert [item["event_id"] for item in again] == ids
    assert sum(source["new_items"] or 0 for source in stored["sources"]) == len(ids)
    one = next(source for source in stored["sources"] if source["new_items"])
    own = _json(f"{api}/api/v1/sources/{one['id']}/items?limit=500", token)["items"]
    assert [item["event_id"] for item in own] == [i for i, item in zip(ids, consumed)
                                                  if item["source_url"] == one["url"]]
    records = _json(f"{api}/api/v1/sources/{one['id']}/records?limit=5", token)["records"]
    assert len(records) == 5 and all(record["item_url"].startswith("http") for record in records)
    # The filter on pages whose last read showed no list gives exactly those the listing says so of.
    without = _json(f"{api}/api/v1/sources?without_list=true&limit=50", token)
    assert without["total"] == len(without["sources"]) == sum(1 for source in stored["sources"] if source["no_list"])


def _send(url: str, token: str, body: dict, method: str = "POST") -> int:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status


def _check_stop_and_verdict(stored: dict, stopped: str, stopped_at: float, judged: str, env: dict) -> None:
    assert {source["url"]: source["watching"] for source in stored["sources"]}[stopped] is False
    assert sum(source["watching"] for source in stored["sources"]) == SOURCES - 1
    # The stop says why; a watched page has no such reason.
    assert {source["url"]: source["stopped_because"] for source in stored["sources"]}[stopped] == "requested"
    assert all(source["stopped_because"] is None for source in stored["sources"] if source["watching"])
    # Its ticks stopped (a tick already on its way may still have been decided). When the worker decided,
    # not when the sink stored it: the row of a decision made before the stop may be stored seconds after.
    last = _sql("SELECT toUnixTimestamp(max(created_at)) AS at FROM revisit_decisions WHERE page_url = "
                f"'{stopped}'", env)[0]["at"]
    assert last < stopped_at + 5
    assert _sql("SELECT url, is_source FROM source_verdicts", env) == [{"url": judged, "is_source": 1}]


def _check_webhooks(posts: list[tuple[str, dict, bytes]], consumed: list[dict], pages: list[str], home: Path) -> None:
    secret = (home / "webhook-secret").read_text().strip().encode()
    for _, headers, body in posts:
        signed = hmac.new(secret, headers["X-Sourcewatch-Timestamp"].encode() + b"." + body, hashlib.sha256)
        assert headers["X-Sourcewatch-Signature"] == f"sha256={signed.hexdigest()}"
        assert json.loads(body)["event_id"] == headers["X-Sourcewatch-Delivery"]
    # Each item posted once to the global webhook, and once to its own page's.
    every = [json.loads(body)["event_id"] for path, _, body in posts if path == "/every"]
    assert sorted(every) == sorted(item["event_id"] for item in consumed)
    for index, page in enumerate(pages):
        own = [json.loads(body)["event_id"] for path, _, body in posts if path == f"/own/{index}"]
        assert sorted(own) == sorted(item["event_id"] for item in consumed if item["source_url"] == page)


def _check_feeds(api: str, token: str, ids: list[str]) -> None:
    expected = [f"urn:sourcewatch:item:{event_id}" for event_id in ids]
    assert _feed_ids(f"{api}/feeds/items.atom", token, _atom_page) == expected
    assert _feed_ids(f"{api}/feeds/items.json", token, _json_feed_page) == expected
    status, body, headers = _get(f"{api}/feeds/items.atom?token={token}", None)
    assert status == 200 and headers["Content-Type"].startswith("application/atom+xml")
    assert 0 < len(feedparser.parse(body).entries) <= len(ids)


def _check_source_feed(api: str, token: str, stored: dict, consumed: list[dict]) -> None:
    # A page's own feed, read by a feed reader (the token in the URL): its new items, and the items its list
    # showed when first read, each once and told apart.
    one = next(source for source in stored["sources"] if source["new_items"])
    status, body, _ = _get(f"{api}/feeds/sources/{one['id']}.json?token={token}&limit=500", None)
    assert status == 200
    entries = json.loads(body)["items"]
    ids = [entry["id"] for entry in entries]
    assert len(ids) == len(set(ids))
    new = [entry for entry in entries if entry["_sourcewatch"]["new"]]
    assert sorted(entry["id"] for entry in new) == sorted(
        f"urn:sourcewatch:item:{item['event_id']}" for item in consumed if item["source_url"] == one["url"])
    listed = [entry for entry in entries if not entry["_sourcewatch"]["new"]]
    records = _json(f"{api}/api/v1/sources/{one['id']}/records?limit=500", token)["records"]
    assert listed and all(entry["id"].startswith("urn:sourcewatch:listed:") for entry in listed)
    assert {(entry["url"], entry["title"]) for entry in listed} <= {(r["item_url"], r["title"]) for r in records}
    assert not {(entry["url"], entry["title"]) for entry in listed} & {(entry["url"], entry["title"]) for entry in new}


def _check_refusals(api: str, token: str) -> None:
    assert _get(f"{api}/healthz", None)[0] == 200
    for path in ("/", "/api/v1/items", "/api/v1/sources", "/feeds/items.atom", "/metrics", "/api/v1/openapi.json"):
        assert _get(api + path, None)[0] == 401, path
        assert _get(api + path, "not-the-token")[0] == 401, path
    assert _get(f"{api}/api/v1/items", token, {"Host": "rebound.example"})[0] == 403
    assert _get(f"{api}/api/v1/items", token, {"Origin": "https://evil.example"})[0] == 403
    assert _get(f"{api}/api/v1/items?limit=100000", token)[0] == 400
    assert _get(f"{api}/api/v1/items?since=not-a-cursor", token)[0] == 400
    assert _get(f"{api}/api/v1/sources/0000/records", token)[0] == 404
    request = urllib.request.Request(f"{api}/api/v1/watch", data=json.dumps({"url": "http://10.0.0.1/x"}).encode(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400 and "private" in json.loads(refused.value.read())["error"]
    document = _json(f"{api}/api/v1/openapi.json", token)
    assert document["openapi"].startswith("3.1") and "/api/v1/items" in document["paths"]


def _check_metrics(api: str, token: str) -> None:
    status, body, headers = _get(f"{api}/metrics", token)
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    text = body.decode()
    # (prometheus_client names a counter's TYPE line with or without `_total`, by version)
    assert re.search(r"^# TYPE sourcewatch_fetch_pages_fetched(_total)? counter$", text, re.MULTILINE)
    assert re.search(r'^sourcewatch_fetch_pages_fetched_total\{.*status="200".*\} [1-9]', text, re.MULTILINE)
    # Each watched page's live figures only when asked for (thousands of pages: tens of thousands of series).
    assert "sourcewatch_revisit_friendliness" not in text and 'source="' not in text
    status, body, _ = _get(f"{api}/metrics?per_source=true", token)
    assert status == 200 and "# TYPE sourcewatch_revisit_friendliness gauge" in body.decode()
    assert re.search(r'^sourcewatch_revisit_friendliness\{.*source="http', body.decode(), re.MULTILINE)
    assert _get(f"{api}/metrics?per_source=maybe", token)[0] == 400


def _check_dashboard(api: str, token: str, watched: int, tmp_path: Path) -> None:
    import asyncio

    from playwright.async_api import async_playwright

    from infra.settings import Settings
    from models.discovery.anchor_boxes import BROWSER_ARGS

    shots = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path

    async def browse() -> list[str]:
        problems: list[str] = []
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=str(Settings().chromium), args=BROWSER_ARGS)
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            await page.goto(f"{api}/?token={token}")
            assert page.url == f"{api}/"  # the token went into a cookie, out of the address bar
            await page.wait_for_selector("#panel-latest tbody tr", timeout=30000)
            assert await page.locator("#panel-sources tbody tr").count() == watched
            for chart in ("throughput", "latency", "new-items", "revisits"):
                assert await page.locator(f"#panel-{chart} canvas").count() >= 1, chart
            for table in ("lag", "reading", "latest"):
                assert await page.locator(f"#panel-{table} tbody tr").count() > 0, table
            assert "error" not in (await page.locator("#status").get_attribute("class"))
            await page.screenshot(path=str(shots / "dashboard.png"), full_page=True)
            await page.locator("#panel-sources tbody tr a").first.click()
            await page.wait_for_selector("#panel-records tbody tr", timeout=30000)
            assert await page.locator("#panel-history canvas").count() >= 1
            await page.screenshot(path=str(shots / "dashboard-source.png"), full_page=True)
            await browser.close()
        return problems

    assert asyncio.run(browse()) == []
