"""`sourcewatch crawl --topical`: a served site crawled through Kafka by the Q-learning topical frontier, its
harvest in ClickHouse."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.site_server import serving_sites
from tests.conftest import cli_json, run_cli

pytestmark = pytest.mark.kafka

NAV = '<nav><a href="/about.html">About</a> <a href="/shop/">Shop</a> <a href="/events/">Events</a></nav>'


def write_site(root: Path) -> None:
    """A homepage whose menu leads to a shop of twelve product pages and to an events list of five events."""
    pages = {
        "index.html": NAV + "<p>Welcome to the club</p>",
        "about.html": NAV + "<p>Who we are</p>",
        "shop/index.html": NAV + "<ul>" + "".join(f'<li><a href="/shop/p{n}.html">Product {n}</a></li>'
                                                   for n in range(12)) + "</ul>",
        **{f"shop/p{n}.html": NAV + f"<h1>Product {n}</h1><p>Price 10</p>" for n in range(12)},
        "events/index.html": NAV + "<main><ul>" + "".join(
            f'<li><a href="/events/e{n}.html">Concert {n}</a> 2026-0{n + 1}-10</li>' for n in range(5)) + "</ul></main>",
        **{f"events/e{n}.html": NAV + f"<main><h1>Concert {n}</h1><p>An evening of music</p></main>" for n in range(5)},
    }
    for path, body in pages.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"<html><body>{body}</body></html>")


def test_a_topical_crawl_goes_to_the_listing_and_its_items_and_streams_its_harvest(pipeline_env, tmp_path):
    site = tmp_path / "club"
    write_site(site)
    with serving_sites([site], env=pipeline_env) as homepages:
        summary = cli_json(["crawl", "--topical", "--seeds", homepages["club"], "--max-pages", "8"], pipeline_env)
        recipes = cli_json(["crawl", "--topical", "--topic", "recipes cooking", "--seeds", homepages["club"]],
                           pipeline_env)
    assert summary["pages_fetched"] == 8
    fetched = [row["url"] for row in cli_json(
        ["sql", f"SELECT url FROM fetches WHERE crawl_id = '{summary['crawl_id']}' ORDER BY fetched_at"],
        pipeline_env)]
    # The menu's event link first, then the list's items before the shop's twelve products.
    assert fetched[1].endswith("/events/")
    assert sum("/events/e" in url for url in fetched) >= 4 and sum("/shop/p" in url for url in fetched) == 0
    topical = summary["topical"]
    assert topical["pages"] == 8 and topical["sites"] == 1 and topical["relevant_sites"] == 1
    assert 1 <= topical["relevant_pages"] < 8 and topical["harvest_rate"] == round(topical["relevant_pages"] / 8, 4)
    links = cli_json(["sql", "SELECT DISTINCT policy FROM links WHERE crawl_id = "
                             f"'{summary['crawl_id']}'"], pipeline_env)
    assert links == [{"policy": "qlearning"}]
    # No link carries the topic's words and nothing is learned yet: the crawl ends at its seed.
    assert recipes["pages_fetched"] == 1 and recipes["topical"]["relevant_pages"] == 0


def test_topic_options_without_topical_are_refused(pipeline_env):
    refused = run_cli(["crawl", "--topic", "concerts", "--seeds", "http://example.org/"], pipeline_env)
    assert refused.returncode == 2 and "--topical" in refused.stderr
    unreadable = run_cli(["crawl", "--topical", "--samples", "nowhere.html", "--seeds", "http://example.org/"],
                         pipeline_env)
    assert unreadable.returncode == 2 and "neither a file nor an http(s) URL" in unreadable.stderr
