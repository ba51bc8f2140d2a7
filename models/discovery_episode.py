"""One discovery episode: from a homepage, click until the policy stops, the click budget is spent, or (first-hit
stopping) a source page is reached; and DESIGN.md's figures over a set of episodes.

Clicks are fetches of same-site links (links out of the site are never followed); the homepage's own fetch
is not a click. Whether a page is a source page is the evaluator's knowledge (the labels), never the policy's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from agents.links import canonical_url, extract_anchors
from models.discovery_policies import Candidate, DiscoveryPolicy

# url → (final URL, HTML text; "" when the page could not be read)
Fetch = Callable[[str], Awaitable[tuple[str, str]]]


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
    final_url, html = await fetch(homepage)
    if not html:
        episode.end = "error"
        return episode
    policy.observe(None, final_url, html)
    visited = {canonical_url(homepage), canonical_url(final_url)}
    frontier: dict[str, Candidate] = {}
    # url → the click whose page it was first seen on (−1: the homepage), and the clicked URLs in order
    found_on: dict[str, int] = {}
    clicked: list[str] = []
    depth, seen = 0, 0
    while episode.clicks < max_steps:
        on_page = []
        for anchor in extract_anchors(html, final_url):
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
        final_url, html = await fetch(choice.url)
        visited.add(canonical_url(final_url))
        policy.observe(choice, final_url, html)
        if is_source(final_url):
            episode.reached.append(final_url)
            episode.end = "found"
            episode.way = _way(len(clicked) - 1, clicked, found_on)
            return episode
    return episode


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
