"""`sourcewatch eval expand --simweb N`: domain discovery on the simulated internet (infra.simweb.internet) —
the bandit against each single operator, a round-robin and a breadth-first crawl over the link graph.

The internet's pages are rendered in this process (the simulated web's own code, no sockets): what an HTTP
fetch of the page would return. The local index starts as a first crawl of a third of the sites (their first
pages breadth-first, within each site); every other site is reachable only through links — a forward crawl
fetches the out-links the index lacks. Per draw, the samples are source pages of indexed sites of one
organisation type that publishes; relevant = a site of that type with a source page (and its pages), the
samples' own sites left out. Harvest rate (Eq. 12): relevant / found, for pages and for sites, over the
budget of pages found.
"""

from __future__ import annotations

import random
import statistics
from collections import deque
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from infra.simweb.generator import generate_web
from infra.simweb.internet import PUBLISHING
from infra.simweb.server import SimClock, FaultBoard, SimSite
from models.expansion.index import PageIndex
from models.expansion.rounds import OPERATORS, Expansion
from models.web.links import canonical_url, extract_anchors
from schemas.sites import site_of

# The share of sites in the first crawl, and the pages read of each.
INDEXED_SHARE = 1 / 3
FIRST_CRAWL_PAGES = 25
# Found pages at which the harvest curves are read.
CURVE_STEP = 50
METHODS = ("bandit", *OPERATORS, "round_robin", "bfs")
# How each method but the bandit and BFS picks a round's operator: always the same one, or each in turn.
CHOOSERS: dict[str, Callable[[int, list[str]], str]] = {
    **{operator: (lambda number, allowed, operator=operator: operator) for operator in OPERATORS},
    "round_robin": lambda number, allowed: allowed[(number - 1) % len(allowed)],
}


class SimulatedInternet:
    """The simulated internet's sites at `http://site-NNNN.simweb.invalid`, read in process."""

    def __init__(self, sites: int, seed: int) -> None:
        # Frozen at the start: which items a list shows does not matter here, only which sites link where.
        clock = SimClock(0.0)
        faults = FaultBoard()
        specs = generate_web(sites, seed, None, clock.start, internet=True)
        self.sites: list[SimSite] = []
        self.sites += [SimSite(spec, clock, faults, self.sites) for spec in specs]
        for site in self.sites:
            site.origin = f"http://{site.spec.name}.simweb.invalid"
        self.by_site = {site_of(site.origin + "/"): site for site in self.sites}
        self.fetches = 0

    def fetch(self, url: str) -> str | None:
        """The page's HTML as the server would answer it, None for a page that is not there."""
        site = self.by_site.get(site_of(url))
        if site is None:
            return None
        self.fetches += 1
        parts = urlsplit(url)
        status, html, _ = site.respond(parts.path or "/", parse_qs(parts.query))
        return html if status == 200 else None

    def fetch_many(self, urls: list[str]) -> dict[str, str]:
        return {url: html for url in urls if (html := self.fetch(url)) is not None}

    def source_urls(self, site: SimSite) -> list[str]:
        return [canonical_url(site.origin + source.path) for source in site.spec.sources]


def first_crawl(internet: SimulatedInternet, sites: list[SimSite], pages: int) -> list[tuple[str, str]]:
    """Each site's first `pages` pages, breadth-first within the site from its homepage."""
    read = []
    for site in sites:
        home = canonical_url(site.origin + "/")
        queue, seen, count = deque([home]), {home}, 0
        while queue and count < pages:
            url = queue.popleft()
            html = internet.fetch(url)
            if html is None:
                continue
            read.append((url, html))
            count += 1
            for anchor in extract_anchors(html, url):
                target = canonical_url(anchor.url)
                if site_of(target) == site_of(url) and target not in seen:
                    seen.add(target)
                    queue.append(target)
    return read


def bfs(index: PageIndex, fetch: Callable[[str], str | None], samples: list[str], budget: int) -> list[str]:
    """A breadth-first crawl over the link graph from the samples: every link followed, `budget` pages read."""
    queue, seen, found = deque(samples), set(samples), []
    while queue and len(found) < budget:
        url = queue.popleft()
        if not index.pages([url]):
            html = fetch(url)
            if html is None:
                continue
            index.add(url, html)
        if url not in samples:
            found.append(url)
        for target in index.out_links(url):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return found


def _harvest(found: list[str], relevant_sites: set[str], sample_sites: set[str]) -> dict[str, float]:
    """Over the pages found (the budget spent, the samples' own sites' pages too): `harvest_rate`, the share
    on relevant sites; `harvest_rate_sites`, the share of relevant sites among the new sites found; and the
    relevant sites found per 100 pages."""
    sites = {site_of(url) for url in found} - sample_sites
    relevant = sites & relevant_sites
    return {"pages": len(found), "sites": len(sites), "relevant_sites": len(relevant),
            "harvest_rate": round(sum(site_of(url) in relevant_sites for url in found) / len(found), 4) if found else 0.0,
            "harvest_rate_sites": round(len(relevant) / len(sites), 4) if sites else 0.0,
            "relevant_sites_per_100_pages": round(100 * len(relevant) / len(found), 3) if found else 0.0}


def _run(method: str, index: PageIndex, internet: SimulatedInternet, samples: list[str], budget: int,
         on_round: Callable[[list[str]], None]) -> list[str]:
    """The pages `method` found, in the order found; `on_round` sees the found list after each round."""
    if method == "bfs":
        found = bfs(index, internet.fetch, samples, budget)
        for end in range(CURVE_STEP, len(found) + CURVE_STEP, CURVE_STEP):
            on_round(found[:end])
        return found
    expansion = Expansion(index, samples, chooser=CHOOSERS.get(method), fetch=internet.fetch_many)
    for number in range(1, 200):
        if len(expansion.found) >= budget:
            break
        if method in expansion.exhausted:
            break  # a single operator that finds nothing new is done
        if expansion.step(number) is None:
            break
        on_round(list(expansion.found))
    return list(expansion.found)[:budget]


def evaluate_simweb(sites: int, seed: int, samples: int, budget: int,
                    progress: Callable[[str], None] | None = None) -> dict:
    internet = SimulatedInternet(sites, seed)
    rng = random.Random(seed)
    indexed_sites = rng.sample(internet.sites, max(1, round(len(internet.sites) * INDEXED_SHARE)))
    crawl = first_crawl(internet, indexed_sites, FIRST_CRAWL_PAGES)
    base = PageIndex()
    base.add_many(crawl)
    if progress:
        progress(f"{sites} sites; first crawl: {len(indexed_sites)} sites, {len(crawl)} pages indexed")
    indexed_names = {site.spec.name for site in indexed_sites}
    curves: dict[str, list[list[dict]]] = {method: [] for method in METHODS}
    finals: dict[str, list[dict]] = {method: [] for method in METHODS}
    draws = []
    for kind in PUBLISHING:
        publishers = [site for site in internet.sites if site.spec.organisation == kind and site.spec.sources]
        candidates = [site for site in publishers if site.spec.name in indexed_names]
        if len(candidates) < 2:
            continue
        chosen = rng.sample(candidates, min(samples, len(candidates)))
        sample_urls = [internet.source_urls(site)[0] for site in chosen]
        sample_sites = {site_of(url) for url in sample_urls}
        relevant_sites = {site_of(site.origin + "/") for site in publishers} - sample_sites
        draws.append({"organisation": kind, "samples": len(sample_urls), "relevant_sites": len(relevant_sites)})
        for method in METHODS:
            index = base.copy()
            # The samples are pages sourcewatch has read (as `sourcewatch expand` requires).
            index.add_many([(url, internet.fetch(url) or "") for url in sample_urls if not index.pages([url])])
            curve: list[dict] = []

            def on_round(found: list[str]) -> None:
                while len(found) >= (len(curve) + 1) * CURVE_STEP and len(curve) * CURVE_STEP < budget:
                    point = found[: (len(curve) + 1) * CURVE_STEP]
                    curve.append({"budget": len(point)} | _harvest(point, relevant_sites, sample_sites))

            found = _run(method, index, internet, sample_urls, budget, on_round)
            index.close()
            curves[method].append(curve)
            finals[method].append(_harvest(found, relevant_sites, sample_sites))
        if progress:
            progress(f"{kind}: " + ", ".join(f"{method} {finals[method][-1]['harvest_rate_sites']:.2f}"
                                              for method in METHODS))
    base.close()
    if not draws:
        raise ValueError(f"no organisation type has two indexed publishing sites among {sites}: use more sites")
    result = {method: _mean(finals[method]) | {"curve": _mean_curve(curves[method])} for method in METHODS}
    return {"operators": result, "draws": draws, "sites": sites, "indexed_sites": len(indexed_sites),
            "indexed_pages": len(crawl), "budget": budget,
            "protocol": f"simulated internet of {sites} sites (seed {seed}); first crawl of {len(indexed_sites)} "
                        f"sites ({FIRST_CRAWL_PAGES} pages each) indexed; per publishing type, {samples} sample "
                        f"source pages; relevant = sites of that type with a source page; budget {budget} pages "
                        f"found; means over the {len(draws)} types"}


def _mean(figures: list[dict]) -> dict:
    return {key: round(statistics.fmean(figure[key] for figure in figures), 4) for key in figures[0]}


def _mean_curve(curves: list[list[dict]]) -> list[dict]:
    """The curves averaged point by point, as far as every draw reached."""
    length = min((len(curve) for curve in curves), default=0)
    return [_mean([curve[point] for curve in curves]) for point in range(length)]
