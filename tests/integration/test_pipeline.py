"""Seeds → fetch → pages.fetched → links → frontier → sink, on the real broker and a real chDB."""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import lxml.html
import pytest

from infra.site_server import serving_sites
from tests.conftest import cli_json, run_cli

pytestmark = pytest.mark.kafka


def write_site(root: Path) -> dict[str, int]:
    """A small site: a homepage, three levels of pages, a Big5 page, a dead link, and off-site links."""
    pages = {
        "index.html": '<nav><a href="/news/">News</a> <a href="about.html">About</a> <a href="mailto:x@y.z">m</a>'
                      '<a href="https://elsewhere.example/">away</a></nav>',
        "about.html": '<a href="/">Home</a> <a href="/team/alice.html">Alice</a> <a href="/gone.html">old</a>',
        "news/index.html": '<ul>' + "".join(f'<li><a href="item-{i}.html">Item {i}</a></li>' for i in range(5)) + "</ul>",
        "team/alice.html": '<a href="../zh.html">中文</a>',
        **{f"news/item-{i}.html": f'<h1>Item {i}</h1><a href="/news/">back</a>' for i in range(5)},
    }
    for path, body in pages.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"<html><body>{body}</body></html>")
    zh = "<h1>活動訊息</h1><p>市民講座與親子活動報名開始，歡迎踴躍參加。最新消息與公告請見首頁。</p><a href='/'>首頁</a>"
    (root / "zh.html").write_bytes(f"<html><body>{zh}</body></html>".encode("big5"))
    return {"200": len(pages) + 1, "404": 1}


def test_crawl_of_a_served_site_lands_in_clickhouse(pipeline_env, tmp_path):
    site = tmp_path / "site-a"
    expected = write_site(site)
    with serving_sites([site], env=pipeline_env) as homepages:
        summary = cli_json(["crawl", "--seeds", homepages["site-a"]], pipeline_env)
    fetched = sum(expected.values())
    assert summary["by_status"] == expected
    assert summary["pages_fetched"] == summary["clickhouse_fetch_rows"] == fetched
    assert summary["errors"] == {"http_error": 1}
    assert summary["pages_per_s"] > 0
    rows = cli_json(["sql", "SELECT count() AS n, uniqExact(url) AS urls FROM fetches"], pipeline_env)
    assert rows == [{"n": fetched, "urls": fetched}]
    zh = cli_json(["sql", "SELECT encoding FROM fetches WHERE url LIKE '%zh.html'"], pipeline_env)
    assert zh == [{"encoding": "big5hkscs"}]
    links = cli_json(["sql", "SELECT countIf(same_site = 0) AS away, count() AS n FROM links"], pipeline_env)
    assert links[0]["away"] == 1 and links[0]["n"] > fetched
    exported = cli_json(["replay", "pages.fetched", "--from-beginning", "--out", str(tmp_path / "p.jsonl")],
                        pipeline_env)
    assert exported["exported"] == fetched
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    assert {json.loads(line)["status"] for line in lines} == {200, 404}


def test_a_crawl_whose_seeds_are_all_refused_says_why_and_fails(pipeline_env, tmp_path):
    site = tmp_path / "site-b"
    write_site(site)
    env = pipeline_env | {"SOURCEWATCH_ALLOW_LOOPBACK": "false"}
    with serving_sites([site], env=pipeline_env) as homepages:
        result = run_cli(["crawl", "--seeds", homepages["site-b"], "--json"], env)
    assert result.returncode == 1
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["pages_ok"] == 0 and summary["errors"] == {"blocked_address": 1}
    assert summary["seed_errors"][0]["error"] == "blocked_address"
    assert "loopback" in result.stderr and "--allow-loopback" in result.stderr


def _reachable_html_files(site_dir: Path) -> set[Path]:
    """An independent plain BFS over a snapshot's files, following every <a href> to the site's own hosts."""
    manifest = json.loads((site_dir / "manifest.json").read_text())
    root, hosts = site_dir / "site", set(manifest["site_hosts"])

    def file_for(path: str) -> Path | None:
        target = root / unquote(path).lstrip("/")
        target = target / "index.html" if target.is_dir() else target
        return target if target.is_file() and target.suffix in (".html", ".htm") else None

    seen, queue, files = {"/"}, ["/"], set()
    while queue:
        path = queue.pop(0)
        target = file_for(path)
        if target is None:
            continue
        files.add(target)
        for anchor in lxml.html.fromstring(target.read_bytes()).iter("a"):
            href = (anchor.get("href") or "").strip()
            parts = urlsplit(urljoin("http://local" + path, href))
            if parts.scheme in ("http", "https") and (parts.netloc == "local" or parts.netloc in hosts):
                if (parts.path or "/") not in seen:
                    seen.add(parts.path or "/")
                    queue.append(parts.path or "/")
    return files


@pytest.mark.data
def test_flink_snapshot_is_crawled_whole(pipeline_env, data_dir, tmp_path):
    site_dir = data_dir / "sites" / "flink-apache-org"
    expected = _reachable_html_files(site_dir)
    with serving_sites([site_dir], env=pipeline_env) as homepages:
        summary = cli_json(["crawl", "--seeds", homepages["flink-apache-org"], "--max-pages", "5000"], pipeline_env)
    rows = cli_json(["sql", "SELECT final_url FROM fetches WHERE status = 200"], pipeline_env)
    crawled = set()
    for row in rows:
        path = unquote(urlsplit(row["final_url"]).path).lstrip("/")
        target = site_dir / "site" / path
        crawled.add(target / "index.html" if target.is_dir() else target)
    assert crawled == expected
    count = cli_json(["sql", "SELECT count() AS n FROM fetches"], pipeline_env)[0]["n"]
    assert count == summary["pages_fetched"]


def _pagination_paths(site_dir: Path, source: str) -> set[str]:
    manifest = json.loads((site_dir / "manifest.json").read_text())
    return {"/" + entry["path"].removesuffix("index.html") for entry in manifest["pagination"] if entry["of"] == source}


def _dated_post_paths(site_dir: Path) -> set[str]:
    """The posts the flink listing links to: dated paths /YYYY/MM/DD/slug/."""
    pages = [site_dir / "site" / "posts" / "index.html", *sorted((site_dir / "site" / "posts" / "page").glob("*/index.html"))]
    return {href for page in pages for href in re.findall(r'href="(/\d{4}/\d{2}/\d{2}/[^"/]+/)"', page.read_text())}


@pytest.mark.data
def test_flink_posts_pagination_is_followed_to_its_end_through_kafka(pipeline_env, data_dir):
    site_dir = data_dir / "sites" / "flink-apache-org"
    expected = _pagination_paths(site_dir, "posts/index.html")
    assert len(expected) == 23  # /posts/ and its pages 2…24
    env = pipeline_env | {"SOURCEWATCH_PAGINATION_MAX_PAGES": "40"}
    with serving_sites([site_dir], env=env) as homepages:
        source = homepages["flink-apache-org"].rstrip("/") + "/posts/"
        summary = cli_json(["crawl", "--sources", "--seeds", source], env)
        followed = cli_json(["sql", "SELECT url FROM fetches WHERE reason = 'paginate' AND status = 200"], env)
        assert expected <= {urlsplit(row["url"]).path for row in followed}
        assert summary["multipage_sources"] == 1
        assert summary["pages_tagged"] == summary["pages_ok"]
        # Every dated post of the 24 pages is a record of the source in ClickHouse, and none is "new" on the
        # first read.
        records = cli_json(["records", source], env)
        posts = {path for path in _dated_post_paths(site_dir) if path}
        assert len(posts) == 237
        assert posts <= {urlsplit(record["item_url"]).path for record in records}
        assert summary["records_read"] >= 237 and summary["new_items"] == 0
        # No BFS: every fetch is the source page or a page of its list.
        reasons = cli_json(["sql", "SELECT DISTINCT reason FROM fetches"], env)
        assert {row["reason"] for row in reasons} == {"source", "paginate"}
        # The default budget: 10 pages of the list, the source page included.
        budgeted = cli_json(["crawl", "--sources", "--seeds", source], pipeline_env)
        assert budgeted["pages_fetched"] == 10
        assert budgeted["new_items"] == 0  # read again, nothing on the site changed
    tagged = cli_json(["sql", "SELECT sum(value) AS n FROM metrics WHERE name = 'pages_tagged'"], env)
    assert tagged[0]["n"] == summary["pages_tagged"] + budgeted["pages_tagged"]


def test_a_crawl_stopped_at_its_time_limit_is_not_carried_on_by_the_next_worker(pipeline_env, tmp_path):
    from tests.integration.test_agent_failures import _start, _stop
    from tests.integration.test_worker import _sql

    # Sixty pages at two a second: more than a crawl of 3 s fetches.
    site = tmp_path / "site-big"
    site.mkdir()
    (site / "index.html").write_text("<html><body>" + "".join(
        f'<a href="p{n}.html">page {n}</a>' for n in range(60)) + "</body></html>")
    for n in range(60):
        (site / f"p{n}.html").write_text(f"<html><body><h1>Page {n}</h1></body></html>")
    env = pipeline_env | {"SOURCEWATCH_PER_HOST_DELAY_SECONDS": "0.5", "SOURCEWATCH_PER_HOST_CONCURRENCY": "1"}
    with serving_sites([site], env=env) as homepages:
        summary = cli_json(["crawl", "--seeds", homepages["site-big"], "--time-limit", "3"], env)
        assert summary["timed_out"] and 0 < summary["pages_fetched"] < 61
        crawl = summary["crawl_id"]
        # Its requests still waiting for their host as its own worker stopped, or still in crawl.requests: neither
        # that worker nor the next one on the topics goes on with the crawl.
        log = tmp_path / "worker.log"
        worker = _start("streams.cli", env, log)
        try:
            deadline = time.monotonic() + 120
            query = "SELECT toInt64(sum(value)) FROM metrics WHERE name = 'requests_dropped'"
            while not (_sql(query, env)[0][0] or 0) > 0:
                assert time.monotonic() < deadline, f"no request dropped\n{log.read_text()[-3000:]}"
                time.sleep(2)
            fetched = _sql(f"SELECT count() FROM fetches WHERE crawl_id = '{crawl}'", env)
            time.sleep(5)
            assert _sql(f"SELECT count() FROM fetches WHERE crawl_id = '{crawl}'", env) == fetched
            assert fetched[0][0] < 61
        finally:
            _stop(worker, log)


class SlowPageServer(http.server.ThreadingHTTPServer):
    """One loopback site: `/fast-N` answers at once, `/slow-N` after SLOW_SECONDS; no robots.txt."""

    SLOW_SECONDS = 8.0

    def __init__(self) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.startswith("/slow-"):
                    time.sleep(SlowPageServer.SLOW_SECONDS)
                found = self.path.startswith(("/fast-", "/slow-"))
                body = f"<html><body><h1>{self.path}</h1></body></html>".encode() if found else b""
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def test_a_fetched_page_is_not_held_back_by_a_slow_one_of_its_batch(pipeline_env):
    # Seeds of one site: one partition, whose requests the fetch stage's actors take in batches, the slow pages
    # asked for last (a site's pages go on in the order they were asked for). Every fast page's row reaches
    # ClickHouse while the slow ones are still being fetched, whichever batch it came in.
    server = SlowPageServer()
    seeds = [f"{server.origin}/fast-{n}" for n in range(8)] + [f"{server.origin}/slow-{n}" for n in range(4)]
    try:
        summary = cli_json(["crawl", "--seeds", *seeds], pipeline_env)
    finally:
        server.shutdown()
    assert summary["pages_fetched"] == summary["clickhouse_fetch_rows"] == 12
    rows = cli_json(["sql", "SELECT url, toUnixTimestamp64Milli(ingested_at) AS ingested, "
                            "toUnixTimestamp64Milli(fetched_at) AS fetched FROM fetches"], pipeline_env)
    fast = [row for row in rows if "/fast-" in row["url"]]
    slow_ends = [row["fetched"] for row in rows if "/slow-" in row["url"]]
    assert len(fast) == 8 and len(slow_ends) == 4
    assert max(row["ingested"] for row in fast) < min(slow_ends)
