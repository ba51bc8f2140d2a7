"""`sourcewatch soak` end to end on a small simulated web, through its faults (a processing worker and the sink
SIGKILLed and restarted, the broker stopped and started again, a share of sites failing, a share of sites' source
pages left to discovery): every figure is there
and adds up, and what must never happen did not — no item twice in `changes`, no tick decided twice, no watched
page lost, no site's politeness exceeded (at its server)."""

from __future__ import annotations

import json

import pytest

from infra.kafka_broker import LocalKafka
from infra.settings import Settings
from tests.conftest import broker_topics, free_port, make_pipeline_env, run_cli

pytestmark = pytest.mark.kafka


def test_a_small_soak_through_faults_loses_no_watched_page_and_decides_no_tick_twice(tmp_path):
    # A broker of its own, run as `sourcewatch kafka` runs one: the soak restarts it.
    port = free_port(29392)
    env = make_pipeline_env("", tmp_path) | {"SOURCEWATCH_KAFKA_DIR": str(tmp_path / "kafka"),
                                             "SOURCEWATCH_KAFKA_PORT": str(port), "SOURCEWATCH_KAFKA_HEAP_MB": "512"}
    del env["SOURCEWATCH_KAFKA_BOOTSTRAP"]
    try:
        done = run_cli(["soak", "--sites", "6", "--days", "3", "--speed", "3600", "--workers", "1", "--faults",
                        "--down-seconds", "8", "--discovery-share", "0.34", "--run-dir", str(tmp_path / "run"),
                        "--json"], env, timeout=600)
        left = broker_topics(f"127.0.0.1:{port}")
    finally:
        LocalKafka(Settings().kafka_libs, tmp_path / "kafka", port=port).stop()
    assert done.returncode in (0, 1), done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["watched"] > 0 and result["published"] > 0
    # The run's own topics are deleted once its figures are read (the figures stay in its ClickHouse).
    assert result["topics_deleted"] >= 20 and not [name for name in left if name.startswith("soak-")], left
    # Two sites went to discovery instead of the watch list (seed 1: site-0004's news page one click deep, and
    # site-0005 without one): the one source page was found and watched, nothing else was taken for one.
    discovery = result["discovery"]
    assert (discovery["sites"], discovery["sites_with_source"], discovery["source_pages"]) == (2, 1, 1)
    assert discovery["found"] == discovery["watched"] == 1 and discovery["false_finds"] == []
    assert discovery["run"]["exit"] == 0 and discovery["run"]["episodes"] == 2
    assert result["published"] == result["in_changes"] + sum(result["missed"].values())
    # The rows' latency from the fetch, by the quarter of the window their fetch fell in: every row in one.
    assert sum(quarter["rows"] for quarter in result["row_latency_from_fetch_by_quarter_s"]) == result["in_changes"]
    assert result["duplicates"] == 0 and result["ticks_decided_twice"] == 0 and result["watched_lost"] == 0
    # Ticks dropped by their owner as already decided, read from the run's metrics (a count, not a loss).
    assert isinstance(result["ticks_sent_again"], int) and result["ticks_sent_again"] >= 0
    # On this small web the revisit stage keeps up with the clock: a stage that stalled would lose no page by
    # the rule above (all fall behind together) but would be this far behind.
    assert 0 <= result["decisions_behind_h"] <= result["days"] * 24 / 10
    assert [kill["worker"] for kill in result["kills"]] == ["process-0", "sink", "broker"]
    assert result["broker_restarted"] is True and result["unclean_exits"] == []
    assert {"sink", "process-0", "broker"} <= set(result["cpu_s"]) and result["peak_rss_mb"]["sink"] > 0
    assert set(result["memory_growth"]) >= {"sink", "process-0"}
    politeness = result["politeness"]
    assert politeness["requests"] >= result["fetches"] and politeness["exceeded"] == []
    assert 0 < politeness["max_in_flight"] <= politeness["allowed_in_flight"]
    # Rows in `changes` that were no new item (an item the page showed at its first read, a menu read as items).
    assert result["not_new"] == {}, result["not_new_examples"]
    # The exit code says whether anything was lost that the soak cannot explain.
    unexplained = result["missed"].get("read after its publication, not found", 0)
    assert done.returncode == (1 if unexplained else 0)
