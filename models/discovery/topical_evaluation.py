"""`sourcewatch eval topical`: crawl policies inside each site, their harvest rate at several fetch budgets.

Every policy crawls every site from its homepage with the discovery episode's core (models.discovery.episode:
the same landing, frontier and budget the stream runs), never ending at a find, until its budget or the
site's links run out, or the policy stops (the Q-learning crawl below its rank bar, the keyword heuristic
with no keyword left, the RL agent at η; BFS and DFS never stop). With `never_stop`, a policy that would
stop goes on breadth-first instead, so every policy spends the same budget — on small sites every policy
then fetches the whole site and the order alone cannot raise the harvest rate much. Pages are read once over loopback
and shared by the policies, so each sees the same site.

Relevant pages: on site folders, the labelled source pages, the further pages of their lists and the item
pages their lists link to (the records the shipped extractor reads on each source page); on the simulated
web, its truth's list pages and their visible items. Harvest rate at budget B: relevant pages among the
first B fetched / pages fetched (`harvest_rate`, over all sites' fetches; `harvest_rate_sites`, the mean of
the sites' own rates, each site once); `recall`: the relevant pages reached / all of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from models.discovery.data import LabelledSite, load_sites, normalized_path
from models.discovery.episode import Fetch, run_episode
from models.discovery.policies import BASELINES, BreadthFirst, Candidate, DiscoveryPolicy
from models.discovery.sites import SimulatedSite, served, simulated_web
from models.discovery.qlearning import STOP_BELOW
from models.discovery.topical import TopicalCrawler
from models.web.dom import parse_html
from models.web.links import canonical_url
from schemas.crawl import CrawlTopic
from schemas.sites import site_of

POLICIES = ("qlearning", "bfs", "dfs", "keyword", "rl")
BUDGETS = (25, 50, 100, 200)


class NoSites(ValueError):
    pass


class Crawling:
    """A policy as a crawl policy, the pages it fetched recorded; with `never_stop`, where it would stop the
    shallowest link is fetched instead."""

    def __init__(self, policy: DiscoveryPolicy, never_stop: bool) -> None:
        self.policy = policy
        self.name = policy.name
        self.fallback = BreadthFirst() if never_stop else None
        self.fetched: list[str] = []

    def reset(self, seed: int) -> None:
        self.policy.reset(seed)
        self.fetched = []

    def observe(self, clicked: Candidate | None, url: str, html: str) -> None:
        self.fetched.append(url)
        self.policy.observe(clicked, url, html)

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None:
        choice = self.policy.choose(on_page, frontier)
        if choice is None and self.fallback is not None:
            return self.fallback.choose(on_page, frontier)
        return choice


@dataclass(frozen=True)
class CrawlSite:
    name: str
    homepage: str
    is_relevant: Callable[[str], bool]
    relevant: int


@dataclass(frozen=True)
class Crawled:
    site: str
    # The pages fetched, in order: relevant or not.
    relevant: list[bool]
    # The site's relevant pages in all.
    of: int


def _policy(name: str, topic: CrawlTopic, never_stop: bool) -> DiscoveryPolicy:
    if name == "qlearning":
        return TopicalCrawler(topic, None if never_stop else STOP_BELOW)
    if name == "rl":
        # The agent brings torch, imported when a crawl needs it: `sourcewatch`'s parser imports this module for
        # its option choices, and no command should wait for torch it does not use.
        from models.discovery.agent import DEFAULT_AGENT, RLCrawler

        return RLCrawler.load(DEFAULT_AGENT)
    return BASELINES[name]()


async def crawl_sites(sites: Sequence[CrawlSite], fetch: Fetch, policies: Sequence[str], budget: int,
                      topic: CrawlTopic, never_stop: bool,
                      progress: Callable[[str], None] | None = None) -> dict[str, list[Crawled]]:
    crawled: dict[str, list[Crawled]] = {name: [] for name in policies}
    for name in policies:
        policy = Crawling(_policy(name, topic, never_stop), never_stop)
        for site in sites:
            await run_episode(policy, site_of(site.homepage), site.homepage, fetch, lambda url: False,
                              negative=site.relevant == 0, max_steps=budget - 1)
            # A page reached twice (two URLs redirecting to one) counts once, as a crawler stores it once.
            pages = list(dict.fromkeys(canonical_url(url) for url in policy.fetched))
            crawled[name].append(Crawled(site.name, [site.is_relevant(url) for url in pages], site.relevant))
            if progress:
                progress(f"{name}: {site.name} {sum(crawled[name][-1].relevant)}/{len(pages)} relevant")
    return crawled


def harvest(crawls: Sequence[Crawled], budgets: Sequence[int]) -> dict:
    figures = {}
    for budget in budgets:
        fetched = [crawl.relevant[:budget] for crawl in crawls]
        pages = sum(len(f) for f in fetched)
        relevant = sum(sum(f) for f in fetched)
        rates = [sum(f) / len(f) for f in fetched if f]
        total = sum(crawl.of for crawl in crawls)
        figures[str(budget)] = {
            "harvest_rate": round(relevant / pages, 4) if pages else None,
            "harvest_rate_sites": round(sum(rates) / len(rates), 4) if rates else None,
            "recall": round(relevant / total, 4) if total else None,
            "fetched": pages, "relevant": relevant}
    return figures


async def _folder_sites(sites: list[LabelledSite], homepages: dict[str, str], fetch: Fetch) -> list[CrawlSite]:
    from models.records.main_list import extract_records

    crawl_sites = []
    for site in sites:
        homepage = homepages[site.name]
        origin = homepage[: homepage.index("/", len("http://"))]
        relevant = set(site.source_paths)
        for path in site.source_paths:
            final_url, html = await fetch(origin + path)
            if html:
                records = extract_records(parse_html(html), final_url).records
                relevant.update(normalized_path(record.item_url) for record in records
                                if site_of(record.item_url) == site_of(final_url))
        relevant |= set(site.pagination_paths)
        crawl_sites.append(CrawlSite(site.name, homepage, lambda url, r=frozenset(relevant): normalized_path(url) in r,
                                     len(relevant) if not site.negative else 0))
    return crawl_sites


def _simulated_sites(sites: list[SimulatedSite], homepages: dict[str, str]) -> list[CrawlSite]:
    return [CrawlSite(site.name, homepages[site.name],
                      lambda url, listed=site.listed_urls: canonical_url(url) in listed, len(site.listed_urls))
            for site in sites]


def evaluate_topical(paths: list[Path], policies: Sequence[str] = POLICIES, budgets: Sequence[int] = BUDGETS,
                     simweb: tuple[int, int] | None = None, topic: CrawlTopic | None = None, never_stop: bool = False,
                     progress: Callable[[str], None] | None = None) -> dict:
    """Each policy's harvest rate (pages and sites) and recall at each budget, on site folders or the
    simulated web (sites, seed)."""
    from models.discovery.agent import DEFAULT_AGENT  # (torch: see _policy)

    unknown = set(policies) - set(POLICIES)
    if unknown:
        raise NoSites(f"unknown policies {sorted(unknown)}: choose from {', '.join(POLICIES)}")
    topic = topic or CrawlTopic()
    budget = max(budgets)

    async def run() -> dict[str, list[Crawled]]:
        if simweb:
            async with simulated_web(*simweb) as (sites, homepages, fetch):
                return await crawl_sites(_simulated_sites(sites, homepages), fetch, policies, budget, topic,
                                         never_stop, progress)
        sites = load_sites(paths)
        if not sites:
            raise NoSites(f"no labelled site folders (with manifest.json) in {', '.join(map(str, paths))}")
        async with served(sites) as (homepages, fetch):
            return await crawl_sites(await _folder_sites(sites, homepages, fetch), fetch, policies, budget, topic,
                                     never_stop, progress)

    crawled = asyncio.run(run())
    headline = str(budgets[1] if len(budgets) > 1 else budget)
    where = f"the simulated web ({simweb[0]} sites, seed {simweb[1]})" if simweb else ", ".join(map(str, paths))
    stopping = ("a policy that would stop goes on breadth-first" if never_stop
                else "each policy stops where it would (bfs, dfs never)")
    return {name: (at := harvest(crawls, budgets))[headline] | {
                "budgets": at,
                "sites": [{"site": c.site, "fetched": len(c.relevant), "relevant": sum(c.relevant), "of": c.of}
                          for c in crawls]}
            for name, crawls in crawled.items()} | {
        "protocol": f"{where}; budgets {list(budgets)} fetches per site, headline at {headline}; qlearning "
                    f"untrained (online learning only); rl: {DEFAULT_AGENT.name} as shipped; {stopping}"}
