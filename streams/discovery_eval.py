"""`sourcewatch eval discovery`: discovery policies on labelled sites served on loopback, one episode per site.

The command serves the sites itself (infra.site_server, one port each) and fetches them directly over HTTP:
an episode's clicks are a handful of local fetches, measured for the policy, not for the pipeline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import aiohttp

from infra.site_server import SiteServer
from models.discovery_data import LabelledSite, load_sites
from models.discovery_episode import Episode, figures, run_episode
from models.discovery_policies import BASELINES

FETCH_TIMEOUT_SECONDS = 10
MAX_PAGE_BYTES = 5 * 1024 * 1024


class NoSites(ValueError):
    """No labelled site folder among the given paths."""


async def _episodes(sites: list[LabelledSite], policies: list[str], max_steps: int,
                    progress: Callable[[str], None] | None) -> dict[str, list[Episode]]:
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
                results[name] = [await run_episode(BASELINES[name](), site.name, homepages[site.name], fetch,
                                                   site.is_source, site.negative, max_steps, seed=index)
                                 for index, site in enumerate(sites)]
                if progress:
                    progress(name)
            return results
    finally:
        await server.stop()


def evaluate_discovery(paths: list[Path], policies: list[str], max_steps: int = 10,
                       progress: Callable[[str], None] | None = None) -> dict:
    sites = load_sites(paths)
    if not sites:
        raise NoSites(f"no labelled site folders (with manifest.json) in {', '.join(map(str, paths))}")
    episodes = asyncio.run(_episodes(sites, policies, max_steps, progress))
    return {name: figures(runs) | {"episodes": [{"site": e.site, "clicks": e.clicks, "reached": e.reached,
                                                  "end": e.end} for e in runs]}
            for name, runs in episodes.items()} | {"max_steps": max_steps, "protocol": "first-hit stopping, ε = 0"}
