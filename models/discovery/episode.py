"""One discovery episode: from a homepage, click until the policy stops, the click budget is spent, or (first-hit
stopping) a source page is reached — or, where an episode may find several (a site's events and its news), its
last; and DESIGN.md's figures over a set of episodes.

The episode's core is pure and serialisable (`EpisodeState` and the steps below), and it is the one both the
stream (agents.discovery, one fetched page at a time through Kafka, the state in a Faust table) and the offline
evaluation and training (`run_episode`, fetching as it goes) run:
- `land`: a page was fetched; its final URL joins the visited ones, and a same-site meta refresh is followed
  like a redirect — not a click (a browser lands on its target), at most three in a row;
- `see_links`: the page's unvisited same-site links (frames and iframes included) join the frontier; a link
  keeps the text, tag path, depth and order of its first sight; those on this page come back, once each, in
  document order (the page the agent scores them on, as it was trained);
- `decide`: a page judged a source page ends the episode found — unless it may find more: then the links the
  found list owns leave the frontier (its pager, its items: the same list, not another) and the episode goes
  on as from any page, the policy's stop ending it found —; else, unless the budget is spent, the policy picks
  the next click from the frontier, or stops.
Whether a page is a source page is the caller's: the labels offline, the classifier in the stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from models.discovery.data import normalized_path
from models.discovery.policies import Candidate, DiscoveryPolicy
from models.web.links import canonical_url, every_way_on
from schemas.links import Anchor
from schemas.sites import site_of

# url → (final URL, HTML text; "" when the page could not be read)
Fetch = Callable[[str], Awaitable[tuple[str, str]]]
# Meta refreshes followed in a row at most (a refresh loop ends there).
MAX_REFRESHES = 3
# Links an episode keeps in its frontier at most (later ones are not added): a trap page of endless links
# would otherwise grow the stream's table value past a Kafka message.
MAX_FRONTIER = 5000


class FrontierLink(BaseModel):
    url: str
    text: str = ""
    tag_path: str = ""
    # Clicks from the homepage to the page it was first seen on, plus one.
    depth: int
    # Order of first sight in the episode (document order within a page).
    order: int
    # The agent's π and h logits for the link on the last page it was seen on (the stream's scores; None
    # offline, where the policy keeps its own).
    logit: float | None = None
    hit_logit: float | None = None

    def candidate(self) -> Candidate:
        return Candidate(self.url, self.text, self.tag_path, self.depth, self.order)


class EpisodeState(BaseModel):
    site: str
    homepage: str
    max_clicks: int
    # Source pages it looks for at most (1: first-hit stopping).
    max_finds: int = 1
    clicks: int = 0
    # Clicks from the homepage to the page landed on last.
    depth: int = 0
    seen: int = 0
    refreshes: int = 0
    frontier: dict[str, FrontierLink] = Field(default_factory=dict)
    visited: list[str] = Field(default_factory=list)
    clicked: list[str] = Field(default_factory=list)
    # url → the click whose page it was first seen on (−1: the homepage)
    found_on: dict[str, int] = Field(default_factory=dict)
    found: list[str] = Field(default_factory=list)
    # The clicks spent when each was found.
    found_at: list[int] = Field(default_factory=list)
    # The stopping model's view (models.discovery.stopping.stop_features) of each choice the policy made, a click
    # or its stop, in order: with people's verdicts on the episode's site, samples for retraining that model.
    choices: list[list[float]] = Field(default_factory=list)
    # found, stop (the policy stopped), budget, error (the homepage could not be read); None while it runs
    end: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Decision:
    """What `decide` concluded: a link to click, or the episode's end; found: the page landed on was judged a
    source page (the episode ends there, or goes on to the click where it may find more)."""

    click: FrontierLink | None = None
    found: str | None = None


# The policy's pick: (links on this page, the whole frontier) → a frontier link, or a stop (None, or the
# reason as a string).
Choose = Callable[[list[FrontierLink], list[FrontierLink]], "FrontierLink | str | None"]


def open_episode(site: str, homepage: str, max_clicks: int, max_finds: int = 1) -> EpisodeState:
    return EpisodeState(site=site, homepage=homepage, max_clicks=max_clicks, max_finds=max_finds,
                        visited=[canonical_url(homepage)])


def land(state: EpisodeState, final_url: str, refresh: str | None) -> str | None:
    """A page of the episode was fetched and landed on `final_url`: the meta refresh to follow next (not a
    click), or None."""
    landed = canonical_url(final_url)
    if landed not in state.visited:
        state.visited.append(landed)
    if (refresh is not None and state.refreshes < MAX_REFRESHES and site_of(refresh) == site_of(final_url)
            and canonical_url(refresh) not in state.visited):
        state.refreshes += 1
        return refresh
    state.refreshes = 0
    return None


def see_links(state: EpisodeState, anchors: Sequence[Anchor]) -> list[FrontierLink]:
    """The page's unvisited same-site links joined to the frontier; those on this page, once each."""
    on_page: dict[str, FrontierLink] = {}
    for anchor in anchors:
        url = canonical_url(anchor.url)
        if not anchor.same_site or url in state.visited or url in on_page:
            continue
        link = state.frontier.get(url)
        if link is None:
            if len(state.frontier) >= MAX_FRONTIER:
                continue
            link = state.frontier[url] = FrontierLink(url=url, text=anchor.text, tag_path=anchor.tag_path,
                                                      depth=state.depth + 1, order=state.seen)
            state.seen += 1
            state.found_on.setdefault(url, len(state.clicked) - 1)
        on_page[url] = link
    return list(on_page.values())


def decide(state: EpisodeState, landed_url: str, is_source: bool, on_page: list[FrontierLink],
           choose: Choose) -> Decision:
    """After landing on a page (and seeing its links): found, budget spent, the policy's stop, or its click."""
    found = None
    if is_source:
        # A page found before, reached again by another of its URLs (/events, /events/index.html), is no new find.
        if _listing_path(landed_url) not in {_listing_path(url) for url in state.found}:
            found = landed_url
            state.found.append(landed_url)
            state.found_at.append(state.clicks)
        # Found at the homepage (a refresh to its news page): every link is the found page's; nothing to go on with.
        if len(state.found) >= state.max_finds or not state.clicked:
            end(state, "found")
            return Decision(found=found)
        _leave_out_the_found_lists_own(state, landed_url)
        on_page = [link for link in on_page if link.url in state.frontier]
    if state.clicks >= state.max_clicks:
        _end_unless_found(state, "budget", f"{state.clicks} clicks")
        return Decision(found=found)
    choice = choose(on_page, list(state.frontier.values())) if state.frontier else "no link left"
    if choice is None or isinstance(choice, str):
        _end_unless_found(state, "stop", choice or "the policy stopped")
        return Decision(found=found)
    del state.frontier[choice.url]
    state.visited.append(choice.url)
    state.clicked.append(choice.url)
    state.clicks += 1
    state.depth = choice.depth
    return Decision(click=choice, found=found)


def _listing_path(url: str) -> str:
    """A page's path as one listing's (a site's pages compared): its index document and trailing slash dropped."""
    return normalized_path(url).rstrip("/")


def _leave_out_the_found_lists_own(state: EpisodeState, found_url: str) -> None:
    """The links a found list owns leave the frontier — those first seen on it (its pager, its items), its own
    other URLs, and those under its path (its items, linked from elsewhere too: the homepage's latest events) —
    so that what the episode clicks next may be another listing."""
    page, own = len(state.clicked) - 1, _listing_path(found_url)
    for url in list(state.frontier):
        path = _listing_path(url)
        if state.found_on.get(url) == page or path == own or path.startswith(own + "/"):
            del state.frontier[url]


def _end_unless_found(state: EpisodeState, how: str, reason: str) -> None:
    """The end of an episode that may have found a source page before: found, the reason it looked no further."""
    end(state, "found" if state.found else how, f"found, then {how}: {reason}" if state.found else reason)


def end(state: EpisodeState, how: str, reason: str = "") -> None:
    state.end, state.reason = how, reason
    state.frontier.clear()  # nothing more is clicked: the stream's table keeps only what the summary needs


@dataclass
class Episode:
    site: str
    negative: bool
    clicks: int = 0
    reached: list[str] = field(default_factory=list)
    # found, stop (the policy stopped), budget, error (the homepage could not be read)
    end: str = "budget"
    # Found a page judged a source page that is not one (judged episodes only).
    false_find: bool = False
    # The clicks (their indices) on the way from the homepage to the first source page reached, in order: the
    # clicks whose pages hold the next link of the way, not detours through other pages.
    way: list[int] = field(default_factory=list)
    # The clicks spent when each source page in `reached` was found.
    found_at: list[int] = field(default_factory=list)
    # The URLs clicked, in order.
    clicked: list[str] = field(default_factory=list)
    # Why it ended so (the policy's stop reason, the budget's clicks…), as the stream reports it.
    reason: str = ""
    # The P(source page) the judge gave the page it ended found on (judged episodes only): a find's confidence.
    find_score: float | None = None
    # The site's source pages as labelled (0 where the caller does not know them).
    source_pages: int = 0


async def run_episode(policy: DiscoveryPolicy, site: str, homepage: str, fetch: Fetch,
                      is_source: Callable[[str], bool], negative: bool, max_steps: int = 10,
                      seed: int = 0, max_finds: int = 1) -> Episode:
    """One episode offline, fetching as it goes, on the same core as the stream; the policy chooses."""
    policy.reset(seed)
    state = open_episode(site, homepage, max_steps, max_finds)
    chosen: dict[str, Candidate] = {}  # one Candidate per link: policies may key their state on it

    def choose(on_page: list[FrontierLink], frontier: list[FrontierLink]) -> FrontierLink | None:
        candidates = {link.url: chosen.setdefault(link.url, link.candidate()) for link in frontier}
        choice = policy.choose([candidates[link.url] for link in on_page], list(candidates.values()))
        return state.frontier[choice.url] if choice is not None else None

    final_url, html, refresh, links = await _fetch(fetch, homepage)
    clicked: Candidate | None = None
    while True:
        while (follow := land(state, final_url, refresh)) is not None:
            final_url, html, refresh, links = await _fetch(fetch, follow)
        if clicked is None and not html:
            end(state, "error", "homepage unreadable")
            return _result(state, negative)
        policy.observe(clicked, final_url, html)
        on_page = see_links(state, links)
        decision = decide(state, final_url, is_source(final_url), on_page, choose)
        if decision.click is None:
            return _result(state, negative)
        clicked = chosen[decision.click.url]
        final_url, html, refresh, links = await _fetch(fetch, decision.click.url)


async def _fetch(fetch: Fetch, url: str) -> tuple[str, str, str | None, list[Anchor]]:
    """A page as a browser shows it: final URL, HTML, meta refresh target and links (<a>, frames, iframes)."""
    final_url, html = await fetch(url)
    refresh, links = every_way_on(html, final_url) if html else (None, [])
    return final_url, html, refresh, links


def _result(state: EpisodeState, negative: bool) -> Episode:
    episode = Episode(state.site, negative, clicks=state.clicks, reached=list(state.found), end=state.end or "budget",
                      clicked=list(state.clicked), reason=state.reason, found_at=list(state.found_at))
    if state.found and state.found_at[0] > 0:  # the way to its first find
        episode.way = _way(state.found_at[0] - 1, state.clicked, state.found_on)
    return episode


def _way(last: int, clicked: list[str], found_on: dict[str, int]) -> list[int]:
    way = [last]
    while (previous := found_on[clicked[way[-1]]]) >= 0:
        way.append(previous)
    return way[::-1]


def figures(episodes: Sequence[Episode]) -> dict:
    """Precision = source pages reached / clicks, recall = episodes that reached one / sites that have one,
    unit cost = clicks / source pages reached (over sites with a source page); clicks spent on sites
    without one (mean); where the episodes know their sites' labelled source pages, the share of them
    reached."""
    positive = [e for e in episodes if not e.negative]
    negative = [e for e in episodes if e.negative]
    reached = sum(len(e.reached) for e in positive)
    clicks = sum(e.clicks for e in positive)
    labelled = sum(e.source_pages for e in positive)
    return {
        "precision": round(reached / clicks, 4) if clicks else None,
        "recall": round(sum(1 for e in positive if e.reached) / len(positive), 4) if positive else None,
        # Of the source pages the labels know (a site's events and its news), the share reached.
        "source_pages_reached": round(reached / labelled, 4) if labelled else None,
        "unit_cost": round(clicks / reached, 4) if reached else None,
        "clicks_on_negative_sites": round(sum(e.clicks for e in negative) / len(negative), 4) if negative else None,
        "sites": len(episodes),
        "sites_with_source_pages": len(positive),
        "ends": {end: sum(1 for e in episodes if e.end == end) for end in ("found", "stop", "budget", "error")},
        "false_finds": sum(1 for e in episodes if e.false_find),
    }
