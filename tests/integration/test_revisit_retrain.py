"""`sourcewatch retrain revisit` on observations replayed from the real broker: it trains, compares on the
held-out window, and swaps the model only when the candidate is better."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
from aiokafka import AIOKafkaProducer

from infra.kafka_topics import ensure_topics
from models.revisit.rhythm import RhythmPrior
from models.revisit.rhythm_model import RhythmLSTM
from schemas.registry import encode
from schemas.revisit import RevisitDecision, RevisitOutcome
from tests.conftest import TRAINING, run_cli

pytestmark = pytest.mark.kafka
START = datetime(2026, 9, 7, tzinfo=UTC)
PAGES, TICKS = 12, 24 * 30


def _observations() -> list[tuple[str, RevisitDecision | RevisitOutcome]]:
    """Pages revisited every hour for 30 days; each gains items at 09:00 UTC on weekdays."""
    messages = []
    for page in range(PAGES):
        url = f"https://site{page}.example/events"
        for tick in range(1, TICKS + 1):
            at = START + timedelta(hours=tick)
            gained = at.hour == 9 and at.weekday() < 5
            messages.append(("revisit.decisions", RevisitDecision(site=f"site{page}.example", page_url=url,
                                                                  tick_at=at, policy="always", fetch=True)))
            messages.append(("revisit.outcomes", RevisitOutcome(site=f"site{page}.example", page_url=url,
                                                                tick_at=at, read=True, new_items=int(gained))))
    return messages


async def _produce(bootstrap: str, prefix: str) -> None:
    await ensure_topics(bootstrap, prefix, 4)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for topic, message in _observations():
            await producer.send(prefix + topic, encode(message), key=message.site.encode())
        await producer.flush()
    finally:
        await producer.stop()


@TRAINING
def test_retraining_swaps_in_a_better_model_and_a_dry_run_keeps_the_current_one(pipeline_env, tmp_path):
    always = RhythmLSTM(RhythmPrior.flat(1.0, 0.01))
    always.threshold, always.version = 0.0, "test-every-tick"
    always.save(tmp_path / "always.pt")
    env = pipeline_env | {"SOURCEWATCH_HOME": str(tmp_path / "home"),
                          "SOURCEWATCH_REVISIT_MODEL": str(tmp_path / "always.pt")}
    nothing = run_cli(["retrain", "revisit"], env)
    assert nothing.returncode == 1 and "revisit.decisions does not exist" in nothing.stderr
    asyncio.run(_produce(env["SOURCEWATCH_KAFKA_BOOTSTRAP"], env["SOURCEWATCH_TOPIC_PREFIX"]))

    # Compared with the model set in the settings, which fetches at every tick (friendliness 0).
    done = run_cli(["retrain", "revisit", "--dry-run", "--json"], env, timeout=600)
    assert done.returncode == 0, done.stderr
    dry = json.loads(done.stdout)
    assert dry["sources"] == PAGES and dry["current_version"] == "test-every-tick"
    assert dry["current"]["timeliness"] == 1.0 and dry["current"]["friendliness"] == 0.0
    assert dry["candidate"]["timeliness"] >= 0.95 and dry["candidate"]["friendliness"] > 0.5
    assert dry["better"] and not dry["swapped"] and not (tmp_path / "home" / "models" / "revisit.pt").exists()

    # A real run swaps the better candidate in, where workers look for a retrained model.
    done = run_cli(["retrain", "revisit", "--json"], env, timeout=600)
    assert done.returncode == 0, done.stderr
    swap = json.loads(done.stdout)
    written = tmp_path / "home" / "models" / "revisit.pt"
    assert swap["swapped"] and swap["written_to"] == str(written)
    assert RhythmLSTM.load(written).version == swap["candidate_version"]

    # Without a model in the settings, the swapped-in one is current; the same recipe on the same
    # observations gives the same model, which is not better, so it stays.
    del env["SOURCEWATCH_REVISIT_MODEL"]
    done = run_cli(["retrain", "revisit", "--json"], env, timeout=600)
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout)
    assert again["current_version"] == swap["candidate_version"]
    assert not again["better"] and not again["swapped"]
    assert RhythmLSTM.load(written).version == swap["candidate_version"]
