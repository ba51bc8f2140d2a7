"""`sourcewatch demo` end to end on the real broker: the summary and what it left in ClickHouse."""

import asyncio

import pytest

from infra.kafka_topics import consumer_group, lag_by_topic
from tests.conftest import cli_json

pytestmark = pytest.mark.kafka


# The demo is the whole job (about 5 minutes on 2 cores, more on a slower machine): past the suite's 300 s.
@pytest.mark.timeout(900)
def test_demo_runs_the_pipeline_and_leaves_its_figures_in_clickhouse(pipeline_env):
    # Long enough for the crawl to go idle (about 15 s on 2 cores): a crawl stopped by its time limit leaves
    # requests in the topic that the next worker (phase 2's) fetches under the first crawl's id.
    summary = cli_json(["demo", "--sites", "20", "--duration", "90", "--watch-days", "8", "--watch-speed", "14400"],
                       pipeline_env, timeout=600)
    assert summary["sites"] == 20
    assert summary["pages_fetched"] > 100
    # Phase 1b: one discovery episode per site through Kafka, scored against the truth.
    discovery = summary["discovery"]
    assert discovery["episodes"] == 20 and sum(discovery["ends"].values()) == 20
    assert summary["source_pages_found"] == discovery["source_pages_found"] >= 1
    episodes = cli_json(["sql", "SELECT count() AS n, sum(clicks) AS clicks FROM discovery_episodes "
                                f"WHERE crawl_id = '{discovery['crawl_id']}'"], pipeline_env)
    assert episodes[0]["n"] == 20 and episodes[0]["clicks"] > 0
    assert 0 < summary["metrics"]["harvest_rate"] < 1
    assert summary["bfs_source_pages_reached"] > 0
    fetched = cli_json(["sql", f"SELECT count() AS n FROM fetches WHERE crawl_id = '{summary['crawl_id']}'"],
                       pipeline_env)
    assert fetched == [{"n": summary["pages_fetched"]}]
    metrics = cli_json(["sql", "SELECT name, value FROM metrics WHERE stage = 'evaluate' ORDER BY name"], pipeline_env)
    assert {row["name"]: row["value"] for row in metrics} == {
        "harvest_rate": summary["metrics"]["harvest_rate"],
        "source_pages_reached": summary["bfs_source_pages_reached"],
        "unit_cost": summary["metrics"]["unit_cost"],
        **{f"discovery_{name}": discovery[name] for name in ("precision", "recall", "unit_cost", "source_pages_found",
                                                             "false_finds") if discovery[name] is not None},
        **{name: summary["reading"][name] for name in ("pagination_recall", "pagination_precision")},
        **{name: summary["reading"]["records"][name] for name in ("record_precision", "record_recall")},
        **{name: summary["reading"]["reread"][name] for name in ("new_items_caught", "new_item_precision",
                                                                   "new_item_recall") if summary["reading"]["reread"][name] is not None},
        **{f"revisit_{name}": value for name, value in summary["reading"]["revisits"]["against_truth"]["model"].items()
           if name in ("timeliness", "friendliness", "delay_h") and value is not None},
    }
    # Phase 2 read the reached source pages and followed their pagination through Kafka.
    reading = summary["reading"]
    assert reading["sources_read"] == summary["source_pages_found"]
    assert reading["pages_tagged"] >= reading["sources_read"] and reading["multipage_sources"] > 0
    assert reading["pagination_recall"] > 0.5
    # Every listing page fetched was tagged.
    listings = cli_json(["sql", "SELECT uniqExact(final_url) AS n FROM fetches "
                                f"WHERE crawl_id = '{reading['crawl_id']}' AND status = 200"], pipeline_env)
    assert listings == [{"n": reading["pages_tagged"]}]
    streamed = cli_json(["sql", "SELECT sum(value) AS n FROM metrics WHERE name = 'pages_fetched'"], pipeline_env)
    phases = (summary["pages_fetched"] + discovery["pages_fetched"] + reading["pages_fetched"]
              + reading["reread"]["pages_fetched"])
    # Every stored fetch has a cause, and no request was fetched twice: a redelivered request is the same row.
    by_reason = {row["reason"]: row for row in cli_json([
        "sql", "SELECT reason, count() AS n, uniqExact(url, crawl_id) AS requests, countIf((site, crawl_id) NOT IN "
               "(SELECT site, crawl_id FROM fetches WHERE reason = 'revisit')) AS outside_revisits "
               "FROM fetches GROUP BY reason"], pipeline_env)}
    assert all(row["n"] == row["requests"] for row in by_reason.values()), by_reason
    # Each phase's crawl holds the fetches it counted (each phase runs until its crawl is idle).
    phase_counts = {summary["crawl_id"]: summary["pages_fetched"], discovery["crawl_id"]: discovery["pages_fetched"],
                    reading["crawl_id"]: reading["pages_fetched"],
                    reading["reread"]["crawl_id"]: reading["reread"]["pages_fetched"]}
    ids = ", ".join(f"'{crawl_id}'" for crawl_id in phase_counts)
    per_phase = cli_json(["sql", f"SELECT crawl_id, count() AS n FROM fetches WHERE crawl_id IN ({ids}) "
                                 "GROUP BY crawl_id"], pipeline_env)
    assert {row["crawl_id"]: row["n"] for row in per_phase} == phase_counts
    # The others are the watch's: revisits — of every page discovery found, from discovery on (those asked for in
    # the last moments may still wait in the topic), and each watched page's first read — and, within a revisit's
    # crawl, the pages of items its listing dates by day alone (for their times) and, where it found every item
    # new, the list's next pages (agents.overflow).
    watch_reasons = ("revisit", "item_time", "overflow")
    assert set(by_reason) <= {"seed", "bfs", "discover", "source", "paginate", *watch_reasons}
    revisits = cli_json(["sql", "SELECT countIf(fetch) AS n, uniqExact(page_url) AS pages FROM revisit_decisions"],
                        pipeline_env)[0]
    # A decision the last worker made as it stopped may have been fetched while its own row still waited in the
    # topic (each table has its own sink agent): it is there, uncommitted, for the next worker to write.
    prefix = pipeline_env["SOURCEWATCH_TOPIC_PREFIX"]
    left = asyncio.run(lag_by_topic(pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"], consumer_group(prefix)))
    assert by_reason["revisit"]["n"] <= revisits["n"] + revisits["pages"] + left.get(f"{prefix}revisit.decisions", 0)
    assert all(by_reason[reason]["outside_revisits"] == 0 for reason in watch_reasons if reason in by_reason)
    stored_fetches = cli_json(["sql", "SELECT count() AS n FROM fetches"], pipeline_env)[0]["n"]
    assert stored_fetches == phases + sum(by_reason[reason]["n"] for reason in watch_reasons if reason in by_reason)
    # Every fetch is streamed as a metric, at least once: a worker stopping at the end of a phase may leave its
    # last batches' offsets uncommitted, and the next phase's worker fetches (and counts) them again — the
    # stored rows are one per request. Four phases end so, each with at most a batch per fetch actor in flight.
    redelivered = 4 * 64 * 4  # phases × agents.fetch's FETCH_BATCH × FETCH_ACTORS
    assert phases <= streamed[0]["n"] <= stored_fetches + redelivered
    # Their records reached ClickHouse, and reading them again reported items published in between.
    records = reading["records"]
    assert summary["records"] == records["records"] > 0
    assert records["record_precision"] > 0.8 and records["record_recall"] > 0.5
    stored = cli_json(["sql", "SELECT count() AS n FROM records"], pipeline_env)
    assert stored[0]["n"] >= records["records"]
    # The re-read's reports are among those counted (a revisit in between may report the others), and no item
    # of these pages was reported twice by any read.
    reread = reading["reread"]
    changes = cli_json(["sql", f"SELECT count() AS n, uniqExact(source_url, item_url) AS items FROM changes "
                               f"WHERE crawl_id = '{reread['crawl_id']}'"], pipeline_env)
    assert changes[0]["n"] == changes[0]["items"] <= summary["new_items_caught"]
    sources = ", ".join(f"'{url}'" for url in reading["sources"])
    every = cli_json(["sql", f"SELECT count() AS n, uniqExact(source_url, item_url) AS items FROM changes "
                             f"WHERE source_url IN ({sources})"], pipeline_env)
    assert every[0]["n"] == every[0]["items"]
    if reread["new_items_caught"]:
        assert reread["new_item_precision"] > 0.8
    # Phase 4: the model decided every tick of every source page it watched, on the simulated web's clock, and
    # its decisions are scored against the truth beside fixed intervals on the same ticks.
    revisits = reading["revisits"]
    assert revisits["watched"] == reading["sources_read"]
    assert revisits["decisions"] >= 5 * revisits["watched"]
    # (Every page discovery found is watched, the false finds too; the figures are over the true ones.)
    pages = ", ".join(f"'{url}'" for url in reading["sources"])
    # The watch phase is scored from its own start (the pages were watched from discovery on).
    stored = cli_json(["sql", "SELECT count() AS n, countIf(fetch) AS fetched, uniqExact(page_url) AS pages FROM "
                              f"revisit_decisions WHERE page_url IN ({pages}) "
                              f"AND tick_at > parseDateTime64BestEffort('{revisits['began']}', 3)"], pipeline_env)
    assert stored == [{"n": revisits["decisions"], "fetched": revisits["revisits"], "pages": revisits["watched"]}]
    found = cli_json(["sql", "SELECT uniqExact(page_url) AS pages FROM revisit_decisions"], pipeline_env)
    assert found[0]["pages"] <= discovery["pages_found"]
    truth = revisits["against_truth"]
    assert truth["sources"] == revisits["watched"]
    if truth["items_published"]:
        assert truth["rc_1"]["timeliness"] == 1.0 and truth["rc_1"]["friendliness"] == 0.0
        assert summary["metrics"]["timeliness"] == truth["model"]["timeliness"]
    # The live figures the stage streamed, per watched page.
    live = cli_json(["watch", "--status"], pipeline_env)
    watched = cli_json(["sql", "SELECT DISTINCT page_url FROM revisit_decisions"], pipeline_env)
    assert {row["source"] for row in live} <= {row["page_url"] for row in watched}
    if revisits["revisits"] >= 3:  # (figures are streamed when a revisit's outcome comes in)
        assert live
        # Each page's learned rhythm is shown beside its figures.
        assert all(row["updates_per_day"] is not None and row["peaks"] for row in live)
    # Per week of the watch (8 days: a whole week and the start of a second), the model, the live estimate and
    # RC(1…6) on the same ticks.
    weeks = summary["revisits"]["weeks"]
    assert [week["week"] for week in weeks] == [1, 2]
    for week in weeks:
        for name in ("model", "live", *(f"rc_{k}" for k in range(1, 7))):
            assert set(week[name]) >= {"timeliness", "friendliness"}
        assert week["rc_1"]["friendliness"] in (0.0, None)
    # The live estimate's update ticks are those the reads placed, each at or before the read that placed it.
    placed = cli_json(["sql", "SELECT page_url, toString(tick_at) AS read, toString(update_at) AS updated "
                              "FROM revisit_observed"], pipeline_env)
    assert {row["page_url"] for row in placed} <= {row["page_url"] for row in watched}
    assert all(row["updated"] <= row["read"] for row in placed)

