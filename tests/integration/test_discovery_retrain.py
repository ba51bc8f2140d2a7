"""`sourcewatch retrain discovery` on what the real broker holds: discovery episodes with their choices, and
people's verdicts on their sites given through the API (`POST /api/v1/sites/verdict`). Sites where the shipped
agent's stopping model gave up and a person then showed the source page teach a candidate to go on there; it
is swapped in because it stops better on the sites held out, and a worker's discovery would load it."""

from __future__ import annotations

import asyncio
import json
import math
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from infra.kafka_topics import ensure_topics
from infra.processes import serve_in_child
from models.discovery.agent import DEFAULT_AGENT, RLCrawler
from models.discovery.stopping import load_retrained
from schemas.discovery import EpisodeEnded
from schemas.registry import encode
from schemas.sites import site_of
from tests.conftest import free_port, run_cli

pytestmark = [pytest.mark.kafka, pytest.mark.data]
GAVE_UP, WITHOUT = 6, 2


def _choice(index: int) -> list[float]:
    """A homepage whose best link (π about 0.55, h 0.01, no listing word) the shipped model gives up on."""
    best, second = 0.53 + 0.01 * index, 0.2
    return [best, second, best - second, 0.01, math.log1p(20 + index), 0.0, 0.0, 0.0]


async def _produce(bootstrap: str, prefix: str, episodes: list[EpisodeEnded]) -> None:
    await ensure_topics(bootstrap, prefix, 4)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for episode in episodes:
            await producer.send(prefix + "discovery.episodes", encode(episode), key=episode.site.encode())
        await producer.flush()
    finally:
        await producer.stop()


def _post(url: str, token: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_site_verdicts_given_through_the_api_retrain_the_stopping_model(pipeline_env, data_dir, tmp_path):
    env = pipeline_env | {"SOURCEWATCH_HOME": str(tmp_path / "home")}
    args = ["retrain", "discovery", "--sites", str(data_dir / "sites"), "--json"]
    nothing = run_cli(args, env)
    assert nothing.returncode == 1 and "does not exist" in nothing.stderr

    shipped = RLCrawler.load(DEFAULT_AGENT).stopper
    # Hosts as the stream keys their episodes and the API its verdicts.
    gave_up = [f"gave-up-{index}.example" for index in range(GAVE_UP)]
    assert all(shipped.stop_reason(_choice(index)) for index in range(GAVE_UP))  # what the shipped model does
    without = [f"none-{index}.example" for index in range(WITHOUT)]
    episodes = [EpisodeEnded(site=site_of(f"https://{site}/"), crawl_id="c", homepage=f"https://{site}/", end="stop", clicks=0,
                             policy="rl", choices=[_choice(index)]) for index, site in enumerate(gave_up)]
    episodes += [EpisodeEnded(site=site_of(f"https://{site}/"), crawl_id="c", homepage=f"https://{site}/", end="stop", clicks=0,
                              policy="rl", choices=[[0.08, 0.05, 0.03, 0.02, math.log1p(8), 0.0, 0.0, 0.0]])
                 for site in without]
    asyncio.run(_produce(env["SOURCEWATCH_KAFKA_BOOTSTRAP"], env["SOURCEWATCH_TOPIC_PREFIX"], episodes))

    with serve_in_child(["serve", "--port", str(free_port(18480))], env) as served:
        api, token = served["url"].rstrip("/"), Path(served["token_file"]).read_text().strip()
        for site in gave_up:
            status, answer = _post(f"{api}/api/v1/sites/verdict", token,
                                   {"homepage": f"https://{site}/", "source_url": f"https://{site}/news/"})
            # The page shown is watched, and labelled a source page for the classifier too.
            assert status == 202 and answer["queued"] == ["sites.verdicts", "sources.verdicts", "sources.found"]
        for site in without:
            status, answer = _post(f"{api}/api/v1/sites/verdict", token,
                                   {"homepage": f"https://{site}/", "source_url": None})
            assert status == 202 and answer["queued"] == ["sites.verdicts"]
        status, refused = _post(f"{api}/api/v1/sites/verdict", token,
                                {"homepage": "https://a.example/", "source_url": "https://b.example/news/"})
        assert status == 400 and f"not on {site_of('https://a.example/')}" in refused["error"]

    retrained = run_cli(args, env, timeout=600)
    assert retrained.returncode == 0, retrained.stderr
    result = json.loads(retrained.stdout)
    # The pages shown were never fetched: the classifier has no page to learn from, and says so.
    assert "0 site(s) with their page on pages.fetched" in result["classifier"]["skipped"]
    stopping = result["stopping"]
    assert stopping["labelled_episodes"] == {"source shown": GAVE_UP, "no source": WITHOUT}
    assert stopping["samples"] == GAVE_UP + WITHOUT and stopping["verdict_sites"] == GAVE_UP + WITHOUT
    held_out = stopping["held_out"]
    assert held_out["current"]["stopped_where_reachable"] == GAVE_UP
    assert held_out["with_verdicts"]["cost"] < held_out["current"]["cost"]
    written = Path(env["SOURCEWATCH_HOME"]) / "models" / "stopping.json"
    assert stopping["swapped"] and stopping["written_to"] == str(written)
    # The worker's discovery loads it over the agent's own (it was built on that model's samples), and goes on.
    swapped_in = load_retrained(written, shipped)
    assert swapped_in is not None and not any(swapped_in.stop_reason(_choice(index)) for index in range(GAVE_UP))
    # Asked again, the model now run already stops right on every judged site: nothing better to swap in.
    again = run_cli(args[:-1] + ["--dry-run"], env, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "stopping:\n  8 choices of episodes judged on 8 sites" in again.stdout
    assert "the candidate is not better: the current model stays" in again.stdout.split("stopping:")[1]
