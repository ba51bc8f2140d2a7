"""`sourcewatch bench crawl` in a small configuration (no timing assertions: timings belong in README)."""

import pytest

from tests.conftest import broker_topics, cli_json

pytestmark = pytest.mark.kafka


def test_bench_crawl_compares_the_three_crawlers_on_the_same_sites(pipeline_env):
    report = cli_json(["bench", "crawl", "--sites", "2", "--runs", "1", "--max-pages", "15", "--no-snapshots"],
                      pipeline_env, timeout=400)
    for key in ("full_pages_per_s", "fetch_parse_pages_per_s", "scrapy_pages_per_s",
                "ratio_full_vs_scrapy", "ratio_fetch_parse_vs_scrapy"):
        assert report[key] is not None and report[key] > 0, key
    pages = {name: figures["pages_fetched"]["median"] for name, figures in report["configurations"].items()}
    # The same budget on the same sites: the three crawlers fetch about the same pages.
    assert pages["full"] == pages["fetch_parse"] == 30
    assert abs(pages["scrapy"] - 30) <= 3
    for figures in report["configurations"].values():
        assert figures["cpu_seconds_per_page"]["median"] > 0 and figures["peak_rss_mb"]["median"] > 0
    assert report["full_consumer_lag_at_end"]["median"] == 0
    # The test's broker is not the project's local one (sourcewatch kafka start): its CPU is not claimed.
    assert report["full_broker_cpu_s"] is None
    # Each run's topics are deleted after it: none is left on the user's broker.
    assert report["full_topics_deleted"]["min"] >= 20
    assert not [name for name in broker_topics(pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"])
                if name.startswith("bench-")]


def test_bench_crawl_runs_the_pipeline_on_started_workers_as_users_scale_out(pipeline_env):
    report = cli_json(["bench", "crawl", "--sites", "2", "--runs", "1", "--max-pages", "15", "--no-snapshots",
                       "--workers", "1"], pipeline_env, timeout=400)
    assert report["full_workers"] == 1
    # The crawl beside a sink worker and a processing worker reads the same pages as alone, and both drained.
    assert report["configurations"]["full"]["pages_fetched"]["median"] == 30
    assert report["full_consumer_lag_at_end"]["median"] == 0
    assert not [name for name in broker_topics(pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"])
                if name.startswith("bench-")]
    assert set(report["full_workers_cpu_s"]) == set(report["full_workers_peak_rss_mb"]) == {"sink", "process-0"}
    for name, spread in report["full_workers_cpu_s"].items():
        assert spread["median"] > 0 and report["full_workers_peak_rss_mb"][name]["median"] > 0, name
