"""`sourcewatch retrain classifier` on verdicts and fetched pages replayed from the real broker: the judged pages
are read from pages.fetched, both recipes are compared on the labelled sites and on the held-out verdicts, and
the candidate is swapped in exactly when it is better."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from infra.kafka_topics import ensure_topics
from models.discovery.classifier import SourcePageClassifier
from models.discovery.data import load_sites
from schemas.crawl import PageFetched
from schemas.links import SourceVerdict
from schemas.registry import encode
from tests.conftest import TRAINING, run_cli

pytestmark = [pytest.mark.kafka, pytest.mark.data]
TRAINED_ON, JUDGED = 4, 3
NEGATIVES_JUDGED = 3


def _judged_messages(sites) -> tuple[list[tuple[str, object]], list[str]]:
    """For each judged site its source pages (verdict: a source) and a few other pages (verdict: not one), as
    fetched pages and verdicts; and two verdicts whose page is not on the topic (never fetched, fetch failed)."""
    messages, at = [], datetime(2026, 11, 1, tzinfo=UTC)
    for site in sites:
        host = f"{site.name}.example"
        files = sorted(site.folder.root.rglob("*.htm*"))
        served = [(site.folder.prefix + str(file.relative_to(site.folder.root)), file) for file in files]
        sources = [item for item in served if site.is_source(item[0])]
        others = [item for item in served if not site.is_source(item[0])][:NEGATIVES_JUDGED]
        for path, file in sources + others:
            url = f"https://{host}{path}"
            messages.append(("pages.fetched", PageFetched(site=host, crawl_id="c", url=url, final_url=url,
                                                          status=200, body=file.read_text(errors="replace"))))
            # A first verdict the person corrected: the latest one counts.
            for is_source in (not site.is_source(path), site.is_source(path)):
                at += timedelta(minutes=1)
                messages.append(("sources.verdicts", SourceVerdict(site=host, url=url, is_source=is_source,
                                                                   created_at=at)))
    never, failed = "https://gone.example/events/", "https://down.example/events/"
    messages.append(("pages.fetched", PageFetched(site="down.example", crawl_id="c", url=failed, final_url=failed,
                                                  status=503)))
    for url in (never, failed):
        messages.append(("sources.verdicts", SourceVerdict(site=url.split("/")[2], url=url, is_source=True)))
    return messages, sorted([never, failed])


async def _produce(bootstrap: str, prefix: str, messages) -> None:
    await ensure_topics(bootstrap, prefix, 4)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_request_size=8 * 1024 * 1024)
    await producer.start()
    try:
        for topic, message in messages:
            await producer.send(prefix + topic, encode(message), key=message.site.encode())
        await producer.flush()
    finally:
        await producer.stop()


@TRAINING
def test_retraining_the_classifier_on_verdicts_swaps_it_in_only_when_better(pipeline_env, data_dir, tmp_path):
    sites = sorted((site for site in load_sites([data_dir / "sites"]) if site.source_paths),
                   key=lambda site: site.name)
    trained_on, judged = sites[:TRAINED_ON], sites[TRAINED_ON:TRAINED_ON + JUDGED]
    env = pipeline_env | {"SOURCEWATCH_HOME": str(tmp_path / "home")}
    site_args = ["--sites", *(str(site.folder.root.parent) for site in trained_on), "--folds", "2", "--json"]
    nothing = run_cli(["retrain", "classifier", *site_args], env)
    assert nothing.returncode == 1 and "sources.verdicts does not exist" in nothing.stderr

    messages, without_page = _judged_messages(judged)
    asyncio.run(_produce(env["SOURCEWATCH_KAFKA_BOOTSTRAP"], env["SOURCEWATCH_TOPIC_PREFIX"], messages))
    retrained = run_cli(["retrain", "classifier", *site_args], env, timeout=600)
    assert retrained.returncode == 0, retrained.stderr
    result = json.loads(retrained.stdout)
    judged_pages = sum(topic == "pages.fetched" and message.ok for topic, message in messages)
    assert result["verdicts"] == judged_pages and result["verdict_sites"] == JUDGED
    assert result["without_page"] == without_page
    assert result["labelled_sites"] == TRAINED_ON
    # Both recipes are tested on the same labelled pages, and on the same judged pages.
    assert result["labelled"]["with"]["pages"] == result["labelled"]["without"]["pages"] > 0
    assert result["verdicts_held_out"]["with"]["pages"] == result["verdicts_held_out"]["without"]["pages"] \
        == judged_pages
    held_out = result["verdicts_held_out"]
    better = (held_out["with"]["accuracy"] > held_out["without"]["accuracy"]
              and result["labelled_f1_change"][1] >= 0)
    low, high = result["labelled_f1_change"]
    assert low <= result["labelled"]["with"]["f1"] - result["labelled"]["without"]["f1"] <= high
    assert result["better"] == better and result["swapped"] == better and bool(result["reasons"]) != better
    written = Path(env["SOURCEWATCH_HOME"]) / "models" / "classifier.pt"
    assert written.is_file() == better
    if better:
        swapped_in = SourcePageClassifier.load(written)
        assert {f"train-only:{site.name}.example" for site in judged} <= set(swapped_in.trained_on)
