"""The simulated web's sites, generated from a seed: same seed, same sites.

Each site has a homepage with a menu, 10–200 ordinary pages (about, contact,
staff, products, services, a blog that is not an event list, a misleading
page), and zero, one or two source pages (events, news) reachable in 1–4 clicks
through hub pages, each paginated in one of several styles and fed by a
publication series (see publication.py). Grown into an internet (internet.py),
each site is also an organisation of a type and links to other sites.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from infra.simweb.internet import ORGANISATIONS, link_graph, organisation_of
from infra.simweb.publication import Series, series_for
from infra.simweb.vocabulary import VOCABULARIES, Vocabulary

TEMPLATES = ("bootstrap", "table", "cards", "definition", "wordpress", "plain")
NAV_STYLES = ("top", "sidebar", "footer", "dropdown", "mega")
PAGINATION_STYLES = ("numbered_query", "numbered_path", "next_only", "load_more", "hashed", "page_size")
LANGUAGES = tuple(VOCABULARIES)
SHARE_WITHOUT_SOURCES = 0.15
# History before the clock starts, and the future after it, in simulated hours.
HISTORY_HOURS = 24 * 120
HORIZON_HOURS = 24 * 90


@dataclass(frozen=True)
class Item:
    number: int
    hours: float  # publication time, simulated hours from the clock's start
    title: str
    place: str


@dataclass(frozen=True)
class SourceSpec:
    kind: str  # events | news
    path: str  # e.g. /events/
    hubs: tuple[str, ...]  # pages clicked through from the homepage before the source (clicks - 1)
    pagination: str
    page_size: int
    series: Series
    items: tuple[Item, ...]  # oldest first

    @property
    def clicks(self) -> int:
        return len(self.hubs) + 1


@dataclass(frozen=True)
class SiteSpec:
    index: int
    lang: str
    template: str
    nav_style: str
    products: int
    services: int
    staff: int
    blog_posts: int
    sources: tuple[SourceSpec, ...]
    # In the simulated internet: the organisation type and the other sites (indices) its homepage links to.
    organisation: str = ""
    links: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return f"site-{self.index:04d}"

    @property
    def words(self) -> Vocabulary:
        return VOCABULARIES[self.lang]

    @property
    def page_count(self) -> int:
        """Ordinary pages (homepage, about, contact, staff, misleading, listings, details, hubs)."""
        return 7 + self.products + self.services + self.blog_posts + sum(len(s.hubs) for s in self.sources)


def _source(rng: random.Random, kind: str, pagination: str, vocabulary: Vocabulary, revisit_dir: Path | None,
            start: datetime) -> SourceSpec:
    clicks = rng.choices([1, 2, 3, 4], weights=[60, 25, 10, 5])[0]
    hubs = tuple(f"/{kind}-hub-{level}/" for level in range(1, clicks))
    series = series_for(rng, revisit_dir, start, HISTORY_HOURS, HORIZON_HOURS)
    items = tuple(
        Item(number, hours, f"{rng.choice(vocabulary.title_words)} {number}", rng.choice(vocabulary.places))
        for number, hours in enumerate(series.hours, start=1)
    )
    path = f"/{kind}/" if clicks == 1 else f"{hubs[-1]}{kind}/"
    return SourceSpec(kind, path, hubs, pagination, rng.choice([5, 10, 20]), series, items)


def generate_site(seed: int, index: int, revisit_dir: Path | None, start: datetime,
                  organisation: str = "") -> SiteSpec:
    """Site `index` of the web of `seed`. Layouts cycle with the index, so that even a small web shows
    every template, menu style and pagination style; everything else is drawn from the seed. An
    organisation of a type that does not publish has no source page."""
    rng = random.Random(f"{seed}:{index}")
    lang = rng.choice(LANGUAGES)
    vocabulary = VOCABULARIES[lang]
    kinds: list[str] = []
    if rng.random() >= SHARE_WITHOUT_SOURCES:
        kinds = rng.choice([["events"], ["news"], ["events", "news"]])
    if organisation and not ORGANISATIONS[organisation][0]:
        kinds = []
    ordinary = rng.randint(3, 193)  # with the 7 fixed pages: 10–200 ordinary pages
    products = rng.randint(0, ordinary // 2)
    services = rng.randint(0, (ordinary - products) // 2)
    blog_posts = ordinary - products - services
    return SiteSpec(
        index=index,
        lang=lang,
        template=TEMPLATES[index % len(TEMPLATES)],
        nav_style=NAV_STYLES[index % len(NAV_STYLES)],
        products=products,
        services=services,
        staff=rng.randint(3, 30),
        blog_posts=blog_posts,
        organisation=organisation,
        sources=tuple(
            _source(rng, kind, PAGINATION_STYLES[(index + n) % len(PAGINATION_STYLES)], vocabulary, revisit_dir, start)
            for n, kind in enumerate(kinds)
        ),
    )


def generate_web(sites: int, seed: int, revisit_dir: Path | None, start: datetime,
                 internet: bool = False) -> list[SiteSpec]:
    """The whole simulated web: `sites` sites, the same for the same seed and data; with `internet`, sites
    are organisations linking to each other (the sites' own pages are drawn as without)."""
    if not internet:
        return [generate_site(seed, index, revisit_dir, start) for index in range(sites)]
    organisations = [organisation_of(seed, index) for index in range(sites)]
    links = link_graph(organisations, seed)
    return [replace(generate_site(seed, index, revisit_dir, start, organisations[index]), links=links[index])
            for index in range(sites)]
