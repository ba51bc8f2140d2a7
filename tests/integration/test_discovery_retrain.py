"""People in discovery's loop, through the real broker into chDB: the sites discovery gave up on wait on the
dashboard (and `GET /api/v1/discovery/gave-up`) for a person to show their listing page or say there is none
(`POST /api/v1/sites/verdict`, from Chromium and from the API); `sourcewatch retrain discovery` then labels the
episodes' choices with those verdicts, and a stopping model that goes on where the shipped one gave up is
swapped in because it stops better on the sites held out."""

from __future__ import annotations

import asyncio
import json
import math
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from infra.processes import serve_in_child
from models.discovery.agent import DEFAULT_AGENT, RLCrawler
from models.discovery.stopping import load_retrained
from schemas.base import Message
from schemas.discovery import EpisodeEnded
from schemas.links import SourceFound
from schemas.sites import site_of
from tests.conftest import free_port, run_cli
from tests.integration.test_classifier_retrain import _produce
from tests.integration.test_find_withdrawn import _api_json
from tests.integration.test_revisit_pipeline import _run_worker_until, _sql

pytestmark = [pytest.mark.kafka, pytest.mark.data]
# Where the dashboard's screenshot of the sites waiting for a verdict goes (docs/ when it is the README's).
SCREENSHOTS = os.environ.get("SOURCEWATCH_SCREENSHOTS")
GAVE_UP, WITHOUT = 6, 2


def _choice(index: int) -> list[float]:
    """A homepage whose best link (π about 0.55, h 0.01, no listing word) the shipped model gives up on."""
    best, second = 0.53 + 0.01 * index, 0.2
    return [best, second, best - second, 0.01, math.log1p(20 + index), 0.0, 0.0, 0.0]


def _episode(host: str, end: str, choices: list[list[float]], found: list[str] = ()) -> EpisodeEnded:
    homepage = f"https://{host}/"
    return EpisodeEnded(site=site_of(homepage), crawl_id="c", homepage=homepage, end=end, clicks=len(choices) - 1,
                        found=list(found), policy="rl", reason="" if found else "the policy stopped", choices=choices)


def _post(url: str, token: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _answer_on_the_dashboard(api: str, token: str, listing: tuple[str, str], none: str) -> tuple[str, str]:
    """In Chromium: show the listing page of one site waiting on the dashboard, say another has none; what each
    row then says."""
    from playwright.async_api import async_playwright

    from infra.settings import Settings
    from models.discovery.anchor_boxes import BROWSER_ARGS

    async def browse() -> tuple[str, str]:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=str(Settings().chromium), args=BROWSER_ARGS)
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            await page.goto(f"{api}/?token={token}")
            rows = page.locator("#panel-gave-up tbody tr")
            await rows.first.wait_for(timeout=30000)
            homepage, url = listing
            shown = rows.filter(has_text=homepage)
            await shown.locator("input").fill(url)
            if SCREENSHOTS:
                await page.locator("#panel-gave-up").screenshot(path=str(Path(SCREENSHOTS) / "dashboard-gave-up.png"))
            await shown.locator("button", has_text="Watch it").click()
            answered = rows.filter(has_text=none)
            await answered.locator("button", has_text="None here").click()
            for row in (shown, answered):
                await row.locator("td", has_text="sent").wait_for(timeout=30000)
            said = (await shown.locator("td").last.text_content(), await answered.locator("td").last.text_content())
            await browser.close()
            return said

    return asyncio.run(browse())


def test_people_answer_for_the_sites_discovery_gave_up_on_and_the_stopping_model_learns(pipeline_env, data_dir,
                                                                                         tmp_path):
    env = pipeline_env | {"SOURCEWATCH_HOME": str(tmp_path / "home")}
    args = ["retrain", "discovery", "--sites", str(data_dir / "sites"), "--json"]
    nothing = run_cli(args, env)
    assert nothing.returncode == 1 and "does not exist" in nothing.stderr

    shipped = RLCrawler.load(DEFAULT_AGENT).stopper
    assert all(shipped.stop_reason(_choice(index)) for index in range(GAVE_UP))  # what the shipped model does
    gave_up = [f"gave-up-{index}.example" for index in range(GAVE_UP)]
    without = [f"none-{index}.example" for index in range(WITHOUT)]
    episodes = [_episode(host, "stop", [_choice(index)]) for index, host in enumerate(gave_up)]
    episodes += [_episode(host, "stop", [[0.08, 0.05, 0.03, 0.02, math.log1p(8), 0.0, 0.0, 0.0]]) for host in without]
    # A site whose episode found its listing, now watched: nothing to ask there.
    found = "https://found.example/events/"
    episodes.append(_episode("found.example", "found", [[0.9, 0.1, 0.8, 0.9, 2.0, 0.0, 1.0, 1.0]], [found]))
    messages: list[tuple[str, Message]] = [("discovery.episodes", episode) for episode in episodes]
    messages.append(("sources.found", SourceFound(site=site_of(found), url=found, crawl_id="c", kind="discovered",
                                                  score=0.97, clicks=1)))
    asyncio.run(_produce(env["SOURCEWATCH_KAFKA_BOOTSTRAP"], env["SOURCEWATCH_TOPIC_PREFIX"], messages))
    _run_worker_until(env, lambda: _sql("SELECT count() AS n FROM discovery_episodes", env)[0]["n"] == len(episodes)
                      and bool(_sql("SELECT url FROM sources", env)), timeout=120)

    with serve_in_child(["serve", "--port", str(free_port(18480))], env) as served:
        api, token = served["url"].rstrip("/"), Path(served["token_file"]).read_text().strip()
        waiting = _api_json(f"{api}/api/v1/discovery/gave-up?limit=5", token)
        assert waiting["total"] == GAVE_UP + WITHOUT and len(waiting["sites"]) == 5
        every = _api_json(f"{api}/api/v1/discovery/gave-up?limit=50", token)["sites"]
        assert {row["homepage"] for row in every} == {f"https://{host}/" for host in gave_up + without}
        assert all((row["end"], row["reason"]) == ("stop", "the policy stopped") for row in every)
        # One site answered on the dashboard, one said to have none there; the others through the API.
        said = _answer_on_the_dashboard(api, token, (f"https://{gave_up[0]}/", f"https://{gave_up[0]}/news/"),
                                        f"https://{without[0]}/")
        assert said == (f"sent: watching https://{gave_up[0]}/news/", "sent: no listing here")
        for host in gave_up[1:]:
            status, answer = _post(f"{api}/api/v1/sites/verdict", token,
                                   {"homepage": f"https://{host}/", "source_url": f"https://{host}/news/"})
            # The page shown is watched, and labelled a source page for the classifier too.
            assert status == 202 and answer["queued"] == ["sites.verdicts", "sources.verdicts", "sources.found"]
        status, answer = _post(f"{api}/api/v1/sites/verdict", token,
                               {"homepage": f"https://{without[1]}/", "source_url": None})
        assert status == 202 and answer["queued"] == ["sites.verdicts"]
        status, refused = _post(f"{api}/api/v1/sites/verdict", token,
                                {"homepage": "https://a.example/", "source_url": "https://b.example/news/"})
        assert status == 400 and f"not on {site_of('https://a.example/')}" in refused["error"]

    _run_worker_until(env, lambda: _sql("SELECT count() AS n FROM site_verdicts", env)[0]["n"] == GAVE_UP + WITHOUT,
                      timeout=120)
    stored = _sql("SELECT homepage, source_url FROM site_verdicts ORDER BY homepage", env)
    assert stored[0] == {"homepage": f"https://{gave_up[0]}/", "source_url": f"https://{gave_up[0]}/news/"}
    assert {row["source_url"] for row in stored if "none-" in row["homepage"]} == {""}
    with serve_in_child(["serve", "--port", str(free_port(18481))], env) as served:
        api, token = served["url"].rstrip("/"), Path(served["token_file"]).read_text().strip()
        assert _api_json(f"{api}/api/v1/discovery/gave-up", token)["total"] == 0  # every site answered

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
