"""`sourcewatch expand`: sites crawled into the page index through Kafka, then domain discovery from two sample
pages finds the other sites of their kind, stores its rounds in ClickHouse and hands the sites to discovery."""

from __future__ import annotations

import json
import sqlite3
import urllib.request
from pathlib import Path

import pytest

from infra.processes import serve_in_child
from infra.site_server import serving_sites
from tests.conftest import cli_json, free_port, run_cli
from tests.integration.test_records_pipeline import _control

pytestmark = pytest.mark.kafka

EVENTS = ("<h1>Upcoming events</h1><ul><li><a href='/events/1.html'>Concert</a> 2026-12-01 19:30</li>"
          "<li><a href='/events/2.html'>Workshop</a> 2026-12-08 18:00</li>"
          "<li><a href='/events/3.html'>Talk</a> 2026-12-15 17:00</li></ul>")


def write(root: Path, pages: dict[str, str]) -> None:
    for path, body in pages.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"<html><head><title>{path}</title></head><body>{body}</body></html>")


def test_expand_finds_the_domain_s_other_sites_and_hands_them_to_discovery(pipeline_env, tmp_path):
    pipeline_env = {**pipeline_env, "SOURCEWATCH_PAGE_INDEX_ENABLED": "true"}
    names = ["club-a", "club-b", "club-c", "club-d", "shop-e"]
    for name in names:
        write(tmp_path / name, {"index.html": "starting"})
    with serving_sites([tmp_path / name for name in names], env=pipeline_env) as homepages:
        home = {name: homepages[name] for name in names}
        # The sites' pages link across sites once the ports are known: a → c, c → the shop, d → b.
        for name, away in (("club-a", "club-c"), ("club-b", None), ("club-c", "shop-e"), ("club-d", "club-b")):
            link = f"<a href='{home[away]}events/'>friends</a>" if away else ""
            write(tmp_path / name, {"index.html": "<nav><a href='/events/'>Events</a> <a href='/about.html'>About</a></nav>",
                                    "about.html": "<p>A club of friends</p>", "events/index.html": EVENTS + link,
                                    **{f"events/{n}.html": f"<p>Event {n}, 2026-12-0{n}</p>" for n in (1, 2, 3)}})
        write(tmp_path / "shop-e", {"index.html": "<p>Shoes and bags, prices</p><a href='/events/'>sale</a>",
                                    "events/index.html": "<p>Shoes on sale, cart, checkout</p>"})
        crawl = cli_json(["crawl", "--seeds", *home.values()], pipeline_env)
        assert crawl["pages_ok"] >= 20
        with sqlite3.connect(pipeline_env["SOURCEWATCH_PAGE_INDEX"]) as index:
            assert index.execute("SELECT count() FROM pages").fetchone()[0] == crawl["pages_ok"]
        samples = [home["club-a"] + "events/", home["club-b"] + "events/"]
        summary = cli_json(["expand", "--samples", *samples, "--discover", "--max-clicks", "3"], pipeline_env)
    found = summary["sites"]
    assert set(found[:2]) == {home["club-c"], home["club-d"]} and found[-1] == home["shop-e"]
    assert summary["end"] == "no operator finds anything new" and summary["rounds"]
    rows = cli_json(["sql", "SELECT round, operator, returned FROM expansion_rounds ORDER BY round"], pipeline_env)
    assert [row["round"] for row in rows] == list(range(1, len(summary["rounds"]) + 1))
    assert {row["operator"] for row in rows} <= {"keyword", "related", "forward", "backward"}
    # The found sites went through discovery: one episode per homepage, through Kafka.
    episodes = summary["discovery"]["episodes"]
    assert {episode["homepage"] for episode in episodes} == set(found)
    # The data API shows the rounds.
    with serve_in_child(["serve", "--port", str(free_port(18466))], pipeline_env) as served:
        token = Path(served["token_file"]).read_text().strip()
        request = urllib.request.Request(served["url"].rstrip("/") + "/api/v1/expansions?limit=100",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            served_rounds = json.loads(response.read())["rounds"]
    assert [(r["round"], r["operator"]) for r in served_rounds] == [(r["round"], r["operator"]) for r in rows]
    assert all(r["expansion_id"] == summary["expansion_id"] for r in served_rounds)


def test_expand_refuses_samples_it_has_not_indexed(pipeline_env):
    refused = run_cli(["expand", "--samples", "http://nowhere.example/events/"], pipeline_env)
    assert refused.returncode == 2 and ("no page index" in refused.stderr or "not in the page index" in refused.stderr)


def test_expand_on_the_simulated_internet_reaches_sites_of_the_samples_type_past_the_first_crawl(pipeline_env):
    """A first crawl of a third of a simulated internet's sites through Kafka; from sample source pages of one
    organisation type, the forward crawl fetches out-links the index lacks, and sites of that type no crawl had
    read come out ranked, go to discovery through Kafka, and their source pages are found."""
    env = {**pipeline_env, "SOURCEWATCH_PAGE_INDEX_ENABLED": "true"}
    with serve_in_child(["simweb", "--internet", "--sites", "45", "--seed", "7", "--speed", "0"], env) as web:
        truth = _control(web["control"] + "/__truth__")
        by_home = {site["homepage"]: site for site in truth.values()}
        crawled = [site["homepage"] for site in truth.values()][::3]
        crawl = cli_json(["crawl", "--seeds", *crawled, "--max-pages", "25"], env)
        assert crawl["pages_ok"] >= 10 * len(crawled)
        with sqlite3.connect(env["SOURCEWATCH_PAGE_INDEX"]) as index:
            indexed = {row[0] for row in index.execute("SELECT url FROM pages")}
        # Samples: source pages the first crawl read, of the type that has most of them.
        read = {site["organisation"]: [] for site in truth.values()}
        for site in truth.values():
            read[site["organisation"]] += [page["url"] for page in site["source_pages"] if page["url"] in indexed]
        kind = max(read, key=lambda kind: len(read[kind]))
        samples = read[kind][:3]
        assert len(samples) >= 2
        # The SearXNG it is told to ask is down: keyword search gives the web up once, with the reason.
        searxng = f"http://127.0.0.1:{free_port(18620)}"
        summary = cli_json(["expand", "--samples", *samples, "--budget", "150", "--sites", "12", "--discover",
                            "--max-clicks", "4", "--searxng", searxng], env, timeout=600)
    assert summary["pages_fetched"] > 0  # the forward crawl read pages past the index
    assert summary["web_searches"] == 0 and len(summary["notes"]) == 1
    assert summary["notes"][0].startswith(f"web search given up: SearXNG at {searxng} is unreachable")
    found = summary["sites"]
    beyond = [home for home in found if home not in crawled]
    assert beyond and any(by_home[home]["organisation"] == kind for home in beyond)
    # Every found site went through discovery on the broker; the sites that publish had their source pages found.
    episodes = {episode["homepage"]: episode for episode in summary["discovery"]["episodes"]}
    assert set(episodes) == set(found)
    sources = {page["url"] for home in found for page in by_home[home]["source_pages"]}
    assert sources and {url for episode in episodes.values() for url in episode["found"]} & sources
