"""Watched source pages are revisited tick by tick through the real broker, and a restarted worker keeps
their state: it goes on from the last decided tick, with the history, learned rhythm and counts of the first
run."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from infra.processes import serve_in_child
from models.revisit.rhythm import RhythmPrior
from models.revisit.rhythm_model import RhythmLSTM
from tests.conftest import ROOT, run_cli
from tests.integration.test_records_pipeline import _control

pytestmark = pytest.mark.kafka
SOURCES = 3
# Simulated seconds per real second: a tick (an hour) every 6 s. The item pages a first read fetches for their
# times go through the broker twice before the source's next revisit must not overtake them; at one tick a
# second a loaded machine lost that race (the outcome went on without its times, as designed for a hung page),
# and at one every 3 s a clean-clone CI run lost it for every page once consumers' fetches waited up to 100 ms a
# hop when little flows (streams.consumer_fetch) — a race of the sped-up clock, not of hour-long ticks.
SPEED = "600"


def _hours(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds() / 3600


def _always_fetch_model(path: Path) -> Path:
    """A model whose threshold is 0: every tick fetches, so the test does not depend on what it predicts."""
    model = RhythmLSTM(RhythmPrior.flat(1.0, 0.01))
    model.threshold, model.version = 0.0, "test-every-tick"
    model.save(path)
    return path


def _sql(query: str, env: dict[str, str]) -> list[dict]:
    result = run_cli(["sql", query, "--json"], env, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _query_sql(query, env: dict[str, str]) -> list[dict]:
    """A project query (infra.queries.Query) through `sourcewatch sql`, its parameters written in as literals."""
    sql = query.sql
    for name, value in query.parameters.items():
        literal = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'" if isinstance(value, str) else str(value)
        sql = re.sub(r"\{" + name + r":[^}]+\}", lambda _: literal, sql)
    return _sql(sql, env)


def _run_worker_until(env: dict[str, str], done, timeout: float = 120) -> str:
    worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "warning"], env=env,
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + timeout
        while not done() and time.monotonic() < deadline:
            time.sleep(1)
    finally:
        worker.send_signal(signal.SIGTERM)
        output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output[-3000:]
    return output


def _instant(text: str) -> datetime:
    """A tick as the topic ('...T18:00:00Z') and as ClickHouse ('... 18:00:00.000', UTC) write it."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


def _decisions(env: dict[str, str]) -> list[dict]:
    return _sql("SELECT page_url, toString(tick_at) AS tick, fetch FROM revisit_decisions ORDER BY tick", env)


def test_a_restarted_worker_keeps_its_watched_sources_and_their_state(pipeline_env, tmp_path):
    env = pipeline_env | {"SOURCEWATCH_REVISIT_MODEL": str(_always_fetch_model(tmp_path / "model.pt")),
                          "SOURCEWATCH_REVISIT_CLOCK_SPEED": SPEED}
    with serve_in_child(["simweb", "--sites", "8", "--seed", "3", "--speed", SPEED], env) as web:
        clock = _control(web["control"] + "/__clock__")
        env |= {"SOURCEWATCH_REVISIT_CLOCK_ORIGIN": clock["now"],
                "SOURCEWATCH_REVISIT_CLOCK_ORIGIN_WALL": str(time.time())}
        truth = _control(web["control"] + "/__truth__")
        urls = [source["url"] for site in truth.values() for source in site["source_pages"]][:SOURCES]
        kinds = {source["url"]: source["kind"] for site in truth.values() for source in site["source_pages"]}
        added = run_cli(["watch", *urls], env)
        assert added.returncode == 0, added.stderr

        # Counted in the decisions table itself, not the revisit metric: a metric row may reach ClickHouse
        # before the decision it counts, and a worker stopped between the two leaves that decision on the topic.
        def revisited(times: int):
            return lambda: len(_sql("SELECT page_url FROM revisit_decisions WHERE fetch "
                                    f"GROUP BY page_url HAVING uniqExact(tick_at) >= {times}", env)) == SOURCES

        # Five revisits in the first run: the second run's outcomes lag its decisions by a few ticks (a read that
        # finds new items waits for their pages' times), and the counts checked below must outrun that lag.
        _run_worker_until(env, revisited(5))
        first = _decisions(env)
        last_tick = max(datetime.fromisoformat(row["tick"]) for row in first)
        fetched_first = {url: sum(row["page_url"] == url for row in first) for url in urls}
        assert all(fetched_first[url] >= 3 for url in urls), fetched_first

        # The second run reads nothing new from sources.found: it can only know the sources from the table. It runs
        # until its decisions are in and each page's live counts show one of its revisits (the gauges reach
        # ClickHouse after the decisions: a worker stopped at once can leave all of them on the topic).
        def counted_on() -> bool:
            gauges = {row["page_url"]: row["revisits"] for row in _sql(
                "SELECT labels['source'] AS page_url, argMaxIf(value, created_at, name = 'revisits') AS revisits "
                "FROM metrics WHERE stage = 'revisit' AND labels['source'] != '' GROUP BY page_url", env)}
            return all(gauges.get(url, 0) > fetched_first[url] + 1 for url in urls)

        again = revisited(max(fetched_first.values()) + 3)
        _run_worker_until(env, lambda: again() and counted_on())
        decisions = _decisions(env)
        second = [row for row in decisions if row not in first]

    assert {row["page_url"] for row in second} == set(urls)
    assert all(datetime.fromisoformat(row["tick"]) > last_tick for row in second)
    # No tick of a source was decided twice, in either run (replayed from the topic, not the deduplicated table).
    out = tmp_path / "decisions.jsonl"
    replay = run_cli(["replay", "revisit.decisions", "--from-beginning", "--out", str(out)], env)
    assert replay.returncode == 0, replay.stderr
    replayed = [json.loads(line) for line in out.read_text().splitlines()]
    ticks = [(row["page_url"], _instant(row["tick_at"])) for row in replayed]
    assert len(ticks) == len(set(ticks))
    # Every stored decision is on the topic. The topic may also hold the last tick or two decided while the worker
    # stopped, after its ClickHouse sink had stopped: those wait for the next worker's sink and are the latest ones.
    stored = {(row["page_url"], _instant(row["tick"])) for row in decisions}
    assert stored <= set(ticks) and len(stored) == len(decisions)
    for url in urls:
        last_stored = max(tick for page_url, tick in stored if page_url == url)
        assert all(tick > last_stored for page_url, tick in set(ticks) - stored if page_url == url)
    # The live counts went on from the first run's: revisits (fetches) of both runs, ticks since it was added.
    latest = _sql("SELECT labels['source'] AS page_url, argMaxIf(value, created_at, name = 'revisits') AS revisits, "
                  "argMaxIf(value, created_at, name = 'ticks_watched') AS ticks FROM metrics "
                  "WHERE stage = 'revisit' AND labels['source'] != '' GROUP BY page_url", env)
    assert {row["page_url"] for row in latest} == set(urls)
    for row in latest:
        in_second = sum(decision["page_url"] == row["page_url"] for decision in second)
        assert row["revisits"] > in_second and row["ticks"] > in_second
    # The learned state went on too: each page's known hours span the first run and go on into the second (its
    # gauges may lag its last decisions by a read or two), more than the second run alone could know; a news
    # list's reach back past the whole watch, to its first read's oldest dated item (an events list, dated ahead,
    # is known from its first read on). Its rhythm (updates per day, peak slots) is shown.
    status = {row["source"]: row for row in json.loads(run_cli(["watch", "--status", "--json"], env).stdout)}
    ticks = {url: [datetime.fromisoformat(row["tick"]) for row in decisions if row["page_url"] == url] for url in urls}
    first_ticks = {url: [datetime.fromisoformat(row["tick"]) for row in first if row["page_url"] == url] for url in urls}
    for url in urls:
        known = status[url]["known_hours"]
        assert known >= _hours(min(first_ticks[url]), max(first_ticks[url])) + 2
        assert known > _hours(max(first_ticks[url]), max(ticks[url]))
        assert status[url]["updates_per_day"] > 0
        # Its busiest slots are told once the page itself has shown an update lately (rhythm.MIN_PEAK_EVIDENCE): a
        # news list's first read dates its recent items; an events list (dated ahead) shows one only when a new
        # event appears between two reads, which a run this short may not hold (no update tick: no timeliness).
        if kinds[url] == "news" or status[url]["timeliness"] is not None:
            assert status[url]["peaks"], status[url]
    assert any(status[url]["known_hours"] > _hours(min(ticks[url]), max(ticks[url])) + 1 for url in urls)
    # Each revisit was a real fetch of the source page with reason "revisit", conditional on the last one's
    # validators: 304 Not Modified while the simulated page gained nothing.
    fetched = _sql("SELECT countIf(status = 200) AS full, countIf(status = 304) AS not_modified FROM fetches "
                   "WHERE crawl_id LIKE 'revisit-%'", env)[0]
    assert fetched["full"] >= SOURCES and fetched["not_modified"] >= 1
    assert fetched["full"] + fetched["not_modified"] >= len(second)
    # The simulated listings date items by day alone: the first reads fetched their newest items' own pages
    # (reason "item_time") and read the publication times there, so the pages' hours were known from the start.
    items = _sql("SELECT count() AS fetched FROM fetches WHERE reason = 'item_time' AND status = 200", env)[0]
    assert items["fetched"] >= SOURCES
    timed = _sql("SELECT sum(value) AS found FROM metrics WHERE stage = 'extract_records' AND name = 'item_times' "
                 "AND labels['found'] = 'true'", env)[0]
    assert timed["found"] >= SOURCES
