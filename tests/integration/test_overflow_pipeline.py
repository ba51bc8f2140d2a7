"""A watched list that gained more items between two revisits than its first page shows: the revisit reads on
to the list's next page, and every new item reaches `changes` once — none is lost off the first page."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import datetime

import pytest

from infra.processes import serve_in_child
from tests.conftest import ROOT, run_cli
from tests.integration.test_records_pipeline import _control, _visible_items
from tests.integration.test_revisit_pipeline import _always_fetch_model, _sql

pytestmark = pytest.mark.kafka


def _busy_source(truth: dict) -> tuple[dict, list[dict]]:
    """A paginated source page and the items to come that overflow its first page (two more than it shows)."""
    for site in truth.values():
        for source in site["source_pages"]:
            coming = sorted((item for item in source["items"] if not item["visible"]),
                            key=lambda item: item["published_at"])
            if len(source["pages"]) >= 2 and len(coming) > source["page_size"] + 2:
                return source, coming[: source["page_size"] + 2]
    raise AssertionError("the simulated web has no paginated source page with enough items to come")


def test_a_revisit_reads_past_a_first_page_whose_items_are_all_new(pipeline_env, tmp_path):
    env = pipeline_env | {"SOURCEWATCH_REVISIT_MODEL": str(_always_fetch_model(tmp_path / "model.pt")),
                          "SOURCEWATCH_REVISIT_CLOCK_SPEED": "3600"}
    # speed 0: the simulated web's clock moves only when the test moves it.
    with serve_in_child(["simweb", "--sites", "12", "--seed", "5", "--speed", "0"], env) as web:
        control = web["control"]
        env |= {"SOURCEWATCH_REVISIT_CLOCK_ORIGIN": _control(control + "/__clock__")["now"],
                "SOURCEWATCH_REVISIT_CLOCK_ORIGIN_WALL": str(time.time())}
        source, coming = _busy_source(_control(control + "/__truth__"))
        url = source["url"]
        before = _visible_items(control, url)
        assert run_cli(["watch", url], env).returncode == 0
        worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "warning"], env=env,
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not _sql(
                    f"SELECT 1 FROM fetches WHERE url = '{url}' AND reason = 'revisit' AND status = 200", env):
                time.sleep(1)
            # The first read has seeded the page; now more items appear than its first page shows.
            now = datetime.fromisoformat(_control(control + "/__clock__")["now"])
            last = datetime.fromisoformat(coming[-1]["published_at"])
            _control(control + "/__clock__", {"advance_hours": (last - now).total_seconds() / 3600 + 0.001})
            published = _visible_items(control, url) - before
            assert {item["url"] for item in coming} <= published
            deadline = time.monotonic() + 120

            def in_changes() -> list[dict]:
                return _sql(f"SELECT item_url, count() AS n FROM changes WHERE source_url = '{url}' "
                            "GROUP BY item_url", env)

            while time.monotonic() < deadline and len(in_changes()) < len(published):
                time.sleep(1)
            time.sleep(3)  # a few more revisits: nothing more is reported
        finally:
            worker.send_signal(signal.SIGTERM)
            output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output[-3000:]
    assert len(published) > source["page_size"]
    changes = in_changes()
    fetched = _sql("SELECT url, reason, status FROM fetches ORDER BY fetched_at", env)
    assert {row["item_url"] for row in changes} == published, (fetched, output[-3000:])
    assert all(row["n"] == 1 for row in changes)
    overflow = _sql("SELECT url FROM fetches WHERE reason = 'overflow'", env)
    assert overflow and all(row["url"] != url for row in overflow)
