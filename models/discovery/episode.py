"""One discovery episode: from a homepage, click until the policy stops, the click budget is spent, or (first-hit
stopping) a source page is reached; and DESIGN.md's figures over a set of episodes.

Clicks are fetches of same-site links (links out of the site are never followed), frames and iframes
included, as in the stream (agents.discovery); the homepage's own fetch is not a click, and neither is
following a page's meta refresh: a browser lands on its target as on a redirect's, so a homepage that
refreshes to the source page reaches it at 0 clicks. Whether a page is a source page is the evaluator's
knowledge (the labels), never the policy's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from models.discovery.policies import Candidate, DiscoveryPolicy
from models.web.links import canonical_url, every_way_on
from schemas.sites import site_of

# url → (final URL, HTML text; "" when the page could not be read)
Fetch = Callable[[str], Awaitable[tuple[str, str]]]
# Meta refreshes followed in a row at most (a refresh loop ends there).
MAX_REFRESHES = 3


@dataclass
class Episode:
    site: str
    negative: bool
    clicks: int = 0
    reached: list[str] = field(default_factory=list)
    # found, stop (the policy stopped), budget, error (the homepage could not be read)
    end: str = "budget"
    # Ended found on a page judged a source page that is not one (judged episodes only).
    false_find: bool = False
    # The clicks (their indices) on the way from the homepage to the source page reached, in order: the
    # clicks whose pages hold the next link of the way, not detours through other pages.
    way: list[int] = field(default_factory=list)


async def run_episode(policy: DiscoveryPolicy, site: str, homepage: str, fetch: Fetch,
                      is_source: Callable[[str], bool], negative: bool, max_steps: int = 10,
                      seed: int = 0) -> Episode:
    policy.reset(seed)
    episode = Episode(site, negative)
    visited = {canonical_url(homepage)}
    final_url, html, links = await _browse(fetch, homepage, visited)
    if not html:
        episode.end = "error"
        return episode
    policy.observe(None, final_url, html)
    if is_source(final_url):
        episode.reached.append(final_url)
        episode.end = "found"
        return episode
    frontier: dict[str, Candidate] = {}
    # url → the click whose page it was first seen on (−1: the homepage), and the clicked URLs in order
    found_on: dict[str, int] = {}
    clicked: list[str] = []
    depth, seen = 0, 0
    while episode.clicks < max_steps:
        on_page = []
        for anchor in links:
            url = canonical_url(anchor.url)
            if not anchor.same_site or url in visited:
                continue
            candidate = frontier.get(url) or Candidate(url, anchor.text, anchor.tag_path, depth + 1, seen)
            if url not in frontier:
                frontier[url], seen = candidate, seen + 1
                found_on.setdefault(url, len(clicked) - 1)
            if candidate not in on_page:
                on_page.append(candidate)
        choice = policy.choose(on_page, list(frontier.values()))
        if choice is None:
            episode.end = "stop"
            return episode
        del frontier[choice.url]
        visited.add(choice.url)
        clicked.append(choice.url)
        episode.clicks += 1
        depth = choice.depth
        final_url, html, links = await _browse(fetch, choice.url, visited)
        policy.observe(choice, final_url, html)
        if is_source(final_url):
            episode.reached.append(final_url)
            episode.end = "found"
            episode.way = _way(len(clicked) - 1, clicked, found_on)
            return episode
    return episode


async def _browse(fetch: Fetch, url: str, visited: set[str]) -> tuple[str, str, list]:
    """A page as a browser shows it: fetched, a same-site meta refresh followed like a redirect (each URL
    landed on joins `visited`); its final URL, HTML and links (<a>, frames and iframes)."""
    final_url, html = await fetch(url)
    visited.add(canonical_url(final_url))
    for _ in range(MAX_REFRESHES):
        refresh, links = every_way_on(html, final_url) if html else (None, [])
        if refresh is None or site_of(refresh) != site_of(final_url) or canonical_url(refresh) in visited:
            return final_url, html, links
        final_url, html = await fetch(refresh)
        visited.add(canonical_url(final_url))
    return final_url, html, every_way_on(html, final_url)[1] if html else []


def _way(last: int, clicked: list[str], found_on: dict[str, int]) -> list[int]:
    way = [last]
    while (previous := found_on[clicked[way[-1]]]) >= 0:
        way.append(previous)
    return way[::-1]


def figures(episodes: Sequence[Episode]) -> dict:
    """Precision = source pages reached / clicks, recall = episodes that reached one / sites that have one,
    unit cost = clicks / source pages reached (over sites with a source page); clicks spent on sites
    without one (mean)."""
    positive = [e for e in episodes if not e.negative]
    negative = [e for e in episodes if e.negative]
    reached = sum(len(e.reached) for e in positive)
    clicks = sum(e.clicks for e in positive)
    return {
        "precision": round(reached / clicks, 4) if clicks else None,
        "recall": round(sum(1 for e in positive if e.reached) / len(positive), 4) if positive else None,
        "unit_cost": round(clicks / reached, 4) if reached else None,
        "clicks_on_negative_sites": round(sum(e.clicks for e in negative) / len(negative), 4) if negative else None,
        "sites": len(episodes),
        "sites_with_source_pages": len(positive),
        "ends": {end: sum(1 for e in episodes if e.end == end) for end in ("found", "stop", "budget", "error")},
        "false_finds": sum(1 for e in episodes if e.false_find),
    }
