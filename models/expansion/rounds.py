"""DWDBRM's expansion rounds: from a domain's sample pages, a bandit chooses a discovery operator each round,
everything found is ranked against the samples, and the top k become the next round's seeds: for each operator
the k best-ranked pages it has not started from yet (the samples first), so that rounds reach further out
instead of asking the same pages again.

Operators (over the local index, models.expansion.index):
- `keyword`: search with the seeds' most frequent words (the samples' in the first round), in the index and,
  where the expansion was given one, on the web (a SearXNG instance: its results fetched and indexed);
- `related`: more like this, from each seed;
- `forward`: the seeds' out-links to other sites (fetched and indexed first where the index lacks them and the
  expansion was given a fetch);
- `backward`: the pages of other sites that link to the seeds.
The bandit is UCB1; a round's reward is Eq. 9's: over the pages the operator returned, 1 − pos/len for a
page found for the first time at position pos of the ranking of everything found (len pages), 0 for one
found before — an operator pays for new pages ranked near the top. Rounds end at the page budget, or when
no operator finds anything new (each says why).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np

from infra.searxng import SearchUnavailable
from models.expansion.index import PageIndex
from models.expansion.ranking import rank_candidates
from models.web.links import canonical_url
from schemas.sites import site_of

OPERATORS = ("keyword", "related", "forward", "backward")
# Pages an operator returns per round at most, and the seeds each round starts from.
PER_ROUND = 50
TOP_K = 10
KEYWORDS = 12
# Pages of each sample's own site read as samples too (DWDBRM starts from sample sites): a listing page says
# little of what kind of organisation publishes it, its site's homepage and about page do.
SITE_SAMPLES = 5


class UCB1:
    """The upper-confidence-bound bandit (Auer et al.): every arm once, then the best mean + √(2 ln n / n_a)."""

    def __init__(self, arms: Sequence[str]) -> None:
        self.arms = list(arms)
        self.pulls = dict.fromkeys(self.arms, 0)
        self.total = dict.fromkeys(self.arms, 0.0)

    def scores(self) -> dict[str, float]:
        n = sum(self.pulls.values())
        return {arm: (math.inf if not self.pulls[arm] else
                      self.total[arm] / self.pulls[arm] + math.sqrt(2 * math.log(n) / self.pulls[arm]))
                for arm in self.arms}

    def choose(self, allowed: Sequence[str] | None = None) -> str:
        scores = self.scores()
        return max((arm for arm in self.arms if allowed is None or arm in allowed), key=lambda arm: scores[arm])

    def update(self, arm: str, reward: float) -> None:
        self.pulls[arm] += 1
        self.total[arm] += reward


def eq9_reward(returned: Sequence[str], new: set[str], position: dict[str, int], known: int) -> float:
    if not returned:
        return 0.0
    return sum(1 - position[url] / known for url in returned if url in new) / len(returned)


@dataclass
class Round:
    number: int
    operator: str
    returned: int
    new: list[str]
    reward: float
    arm_scores: dict[str, float]
    seeds: list[str]


@dataclass
class Expansion:
    """Rounds over one index from the sample pages (URLs in the index)."""

    index: PageIndex
    samples: list[str]
    # Choose each round's operator: the bandit (default), or a fixed rule for comparison.
    chooser: Callable[[int, list[str]], str] | None = None
    # Fetch pages not yet indexed (url → HTML of those that could be read): the forward crawl's reach past
    # what sourcewatch has read. Without it every operator stays within the index.
    fetch: Callable[[list[str]], dict[str, str]] | None = None
    # Search the web (words, results page → URLs; raises SearchUnavailable): keyword search past the index.
    web_search: Callable[[list[str], int], list[str]] | None = None
    top_k: int = TOP_K
    per_round: int = PER_ROUND
    found: dict[str, int] = field(default_factory=dict)  # url → the round it was found in
    ranking: list[str] = field(default_factory=list)
    end: str = ""

    def __post_init__(self) -> None:
        self.bandit = UCB1(OPERATORS)
        self.seeds = list(self.samples)
        # Per operator, the pages it has started from.
        self.expanded: dict[str, set[str]] = {operator: set() for operator in OPERATORS}
        self.exhausted: set[str] = set()
        pages = {page.url: page for page in self.index.pages(self.samples)}
        self.sample_texts = [pages[url].words() for url in self.samples if url in pages]
        self.sample_text_sites = [pages[url].site for url in self.samples if url in pages]
        self.site_page_texts = [page.words() for site in dict.fromkeys(map(site_of, self.samples))
                                for page in self.index.site_pages(site, SITE_SAMPLES) if page.url not in pages]
        self.sample_sites = {site_of(url) for url in self.samples}
        self.edges = self.index.edges()
        self.fetched = 0
        self.web_searches = 0
        # Why a part of the rounds was given up (the web search down, say), for the summary.
        self.notes: list[str] = []

    def keywords(self) -> list[str]:
        texts = ([page.words() for page in self.index.pages(self.seeds)]
                 or [*self.sample_texts, *self.site_page_texts])
        counts = Counter(word for text in texts for word in set(text.lower().split()) if len(word) > 3)
        return [word for word, _ in counts.most_common(KEYWORDS)]

    def _seeds_for(self, operator: str) -> list[str]:
        """The k best pages (the samples, then the best-ranked found) `operator` has not started from yet."""
        started = self.expanded[operator]
        seeds = [url for url in dict.fromkeys([*self.samples, *self.ranking]) if url not in started][: self.top_k]
        started.update(seeds)
        return seeds

    def operate(self, operator: str) -> list[str]:
        # Searches ask past what is found already: the next results, not the same ones again.
        known = len(self.found) + len(self.samples)
        if operator == "keyword":
            words = self.keywords()
            found = [url for url in self.index.search(words, self.per_round + known) if url not in self.found]
            found = self._search_web(words) + found
        elif operator == "related":
            share = max(self.per_round // max(len(self.seeds), 1), 1)
            found = [url for seed in self.seeds
                     for url in [url for url in self.index.related(seed, share + known) if url not in self.found][:share]]
        elif operator == "forward":
            found = [url for seed in self.seeds for url in self.index.out_links(seed) if site_of(url) != site_of(seed)]
            self._fetch_unindexed(found)
        else:
            found = [url for seed in self.seeds for url in self.index.in_links(seed) if site_of(url) != site_of(seed)]
        indexed = {page.url for page in self.index.pages(found)} if found else set()
        samples = set(self.samples)
        return [url for url in dict.fromkeys(found) if url in indexed and url not in samples][: self.per_round]

    def _search_web(self, words: list[str]) -> list[str]:
        """The web search's next results page for the words, fetched and indexed; nothing once it failed (it is
        not asked again: one reason in the notes, no loop)."""
        if self.web_search is None or self.fetch is None or not words:
            return []
        try:
            results = self.web_search(words, self.web_searches + 1)
        except SearchUnavailable as error:
            self.notes.append(f"web search given up: {error}")
            self.web_search = None
            return []
        self.web_searches += 1
        urls = [canonical_url(url) for url in results]
        self._fetch_unindexed(urls)
        return [url for url in urls if url not in self.found]

    def _fetch_unindexed(self, urls: list[str]) -> None:
        """Fetch and index the pages among `urls` the index lacks (a round's worth at most)."""
        if self.fetch is None:
            return
        indexed = {page.url for page in self.index.pages(urls)} if urls else set()
        wanted = [url for url in dict.fromkeys(urls) if url not in indexed][: self.per_round]
        pages = list(self.fetch(wanted).items()) if wanted else []
        if pages:
            self.index.add_many(pages)
            self.fetched += len(pages)
            self.edges = self.index.edges()

    def step(self, number: int) -> Round | None:
        allowed = [arm for arm in OPERATORS if arm not in self.exhausted]
        if not allowed:
            self.end = "no operator finds anything new"
            return None
        operator = self.chooser(number, allowed) if self.chooser else self.bandit.choose(allowed)
        self.seeds = self._seeds_for(operator)
        returned = self.operate(operator)
        new = [url for url in returned if url not in self.found]
        for url in new:
            self.found[url] = number
        self._rank()
        position = {url: place for place, url in enumerate(self.ranking)}
        reward = eq9_reward(returned, set(new), position, len(self.ranking))
        self.bandit.update(operator, reward)
        if not new:
            self.exhausted.add(operator)
        else:
            self.exhausted.clear()  # new seeds may give the others something again
        return Round(number, operator, len(returned), new, round(reward, 4),
                     {arm: round(score, 4) if math.isfinite(score) else None
                      for arm, score in self.bandit.scores().items()}, list(self.seeds))

    def _rank(self) -> None:
        urls = list(self.found)
        if not urls or not self.sample_texts:
            self.ranking = urls
            return
        texts = {page.url: page.words() for page in self.index.pages(urls)}
        placed = rank_candidates(self.sample_texts, self.sample_text_sites, [texts[url] for url in urls], urls,
                                 self.edges, self.site_page_texts)["combined"]
        self.ranking = [urls[i] for i in np.argsort(placed, kind="stable")]

    def run(self, budget: int, max_rounds: int = 100) -> list[Round]:
        """Rounds until `budget` pages are found, no operator finds anything new, or `max_rounds`."""
        rounds = []
        for number in range(1, max_rounds + 1):
            if len(self.found) >= budget:
                self.end = f"the budget of {budget} pages is reached"
                break
            result = self.step(number)
            if result is None:
                break
            rounds.append(result)
        else:
            self.end = f"{max_rounds} rounds"
        return rounds

    def homepages(self) -> list[str]:
        """The homepage (scheme and host) of each site found, in the order of its best-ranked page, the
        samples' own sites left out."""
        found: dict[str, str] = {}
        for url in self.ranking:
            site = site_of(url)
            if site not in self.sample_sites and site not in found:
                parts = urlsplit(url)
                found[site] = f"{parts.scheme}://{parts.netloc}/"
        return list(found.values())
