"""`sourcewatch eval discovery`: discovery policies on labelled sites served on loopback, one episode per site.

The command serves the sites itself (infra.site_server, one port each) and fetches them directly over HTTP:
an episode's clicks are a handful of local fetches, measured for the policy, not for the pipeline.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path

import aiohttp

from infra.site_server import SiteServer
from agents.links import canonical_url, extract_anchors
from models.discovery_data import LabelledSite, load_sites
from models.discovery_episode import Episode, Fetch, figures, run_episode
from models.discovery_policies import BASELINES, Candidate
from models.discovery_qlearning import QLearningCrawler

POLICIES = {**BASELINES, "qlearning": QLearningCrawler}

FETCH_TIMEOUT_SECONDS = 10
MAX_PAGE_BYTES = 5 * 1024 * 1024


class NoSites(ValueError):
    """No labelled site folder among the given paths."""


def _folds(sites: list[LabelledSite], folds: int | None, seed: int) -> list[tuple[list, list]]:
    """Site-grouped folds: (training sites, test sites); without folds, nothing to train on."""
    if not folds:
        return [([], sites)]
    order = random.Random(seed).sample(sites, len(sites))
    parts = [order[index::folds] for index in range(folds)]
    return [([site for other in parts if other is not part for site in other], part) for part in parts]


async def _training_data(sites: list[LabelledSite], homepages: dict[str, str],
                         fetch: Fetch) -> tuple[list[tuple[Candidate, int]], list[str]]:
    """The homepage links of the training sites with their Q bin (2: a source page; 1: its page links to one;
    0: neither), and the text of their source pages (the sample set)."""
    links, samples = [], []
    for site in sites:
        final_url, html = await fetch(homepages[site.name])
        seen = {canonical_url(final_url)}
        for order, anchor in enumerate(extract_anchors(html, final_url)):
            url = canonical_url(anchor.url)
            if not anchor.same_site or url in seen:
                continue
            seen.add(url)
            if site.is_source(url):
                links.append((Candidate(url, anchor.text, anchor.tag_path, 1, order), 2))
                samples.append((await fetch(url))[1])
                continue
            target, page = await fetch(url)
            leads = any(site.is_source(a.url) for a in extract_anchors(page, target)) if page else False
            links.append((Candidate(url, anchor.text, anchor.tag_path, 1, order), int(leads)))
    return links, samples


async def _episodes(sites: list[LabelledSite], policies: list[str], max_steps: int, folds: int | None,
                    fold_seed: int, progress: Callable[[str], None] | None) -> dict[str, list[Episode]]:
    server = SiteServer([site.folder for site in sites])
    homepages = await server.start()
    timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT_SECONDS)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async def fetch(url: str) -> tuple[str, str]:
                try:
                    async with session.get(url) as response:
                        if response.status != 200 or "html" not in response.content_type:
                            return str(response.url), ""
                        body = await response.content.read(MAX_PAGE_BYTES)
                        return str(response.url), body.decode(response.charset or "utf-8", errors="replace")
                except (aiohttp.ClientError, TimeoutError):
                    return url, ""

            results: dict[str, list[Episode]] = {}
            for name in policies:
                policy = POLICIES[name]()
                episodes: dict[str, Episode] = {}
                for train, test in _folds(sites, folds, fold_seed) if hasattr(policy, "fit") else [([], sites)]:
                    if train:
                        policy.fit(*await _training_data(train, homepages, fetch))
                    for site in test:
                        episodes[site.name] = await run_episode(policy, site.name, homepages[site.name], fetch,
                                                                site.is_source, site.negative, max_steps,
                                                                seed=sites.index(site))
                results[name] = [episodes[site.name] for site in sites]
                if progress:
                    progress(name)
            return results
    finally:
        await server.stop()


def evaluate_discovery(paths: list[Path], policies: list[str], max_steps: int = 10, folds: int | None = None,
                       fold_seed: int = 0, progress: Callable[[str], None] | None = None) -> dict:
    """Each policy's figures over one episode per site. A learning policy is trained on the other folds' sites
    with `folds` (site-grouped cross-validation), and runs untrained (learning online only) without."""
    sites = load_sites(paths)
    if not sites:
        raise NoSites(f"no labelled site folders (with manifest.json) in {', '.join(map(str, paths))}")
    episodes = asyncio.run(_episodes(sites, policies, max_steps, folds, fold_seed, progress))
    protocol = "first-hit stopping, ε = 0; " + (f"learning policies: site-grouped {folds}-fold cross-validation"
                                                 if folds else "learning policies untrained (online learning only)")
    return {name: figures(runs) | {"episodes": [{"site": e.site, "clicks": e.clicks, "reached": e.reached,
                                                  "end": e.end} for e in runs]}
            for name, runs in episodes.items()} | {"max_steps": max_steps, "protocol": protocol}
