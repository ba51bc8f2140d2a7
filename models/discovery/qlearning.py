"""The Q-learning topical crawler (Wang & Wang) as a discovery baseline.

Q(u) = R(u) + γ · mean Q of u's crawled children. The immediate reward R(u) is the keyword similarity of the
link that led to u (its anchor text and URL) plus the cosine between u's text and the sample set (the text
of known source pages). A naive-Bayes model maps a link's context (anchor text and URL words) to a Q bin
(low, middle, high); the frontier is ranked by the link's keyword similarity plus γ · its expected Q under
that model, and the crawler stops when the best link's rank falls below STOP_BELOW. The naive Bayes and the
sample set are fitted on training sites (a link is "high" when it leads to a source page, "middle" when its
page links to one); during an episode every crawled page's Q (backed up to its parent) updates the naive
Bayes online.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, Field

from models.discovery.policies import KEYWORDS, Candidate, keyword_score
from models.web.dom import normalize_space, parse_html, text_content

GAMMA = 0.5
BIN_VALUES = (0.0, 0.5, 1.0)
STOP_BELOW = 0.3
_WORDS = re.compile(r"[^\W\d_]{2,}|[\u3040-\u30ff\u3400-\u9fff]", re.UNICODE)


def context_words(candidate: Candidate) -> list[str]:
    path = unquote(urlsplit(candidate.url).path)
    return [word.lower() for word in _WORDS.findall(f"{candidate.text} {path}")]


def page_words(html: str) -> Counter[str]:
    root = parse_html(html)
    if root is None:
        return Counter()
    for element in root.iter("script", "style"):
        element.drop_tree()
    return Counter(word.lower() for word in _WORDS.findall(normalize_space(text_content(root))))


def cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(count * b[word] for word, count in a.items() if word in b)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


class NaiveBayesBins(BaseModel):
    """Multinomial naive Bayes from a link's context words to a Q bin, add-one smoothed; plain data (the
    stream keeps a topical crawl's in a table)."""

    words: list[dict[str, int]] = Field(default_factory=lambda: [{} for _ in BIN_VALUES])
    totals: list[int] = Field(default_factory=lambda: [0] * len(BIN_VALUES))
    links: list[int] = Field(default_factory=lambda: [0] * len(BIN_VALUES))
    vocabulary: int = 0

    def add(self, words: Sequence[str], bin_index: int) -> None:
        counts = self.words[bin_index]
        for word in words:
            if not any(word in other for other in self.words):
                self.vocabulary += 1
            counts[word] = counts.get(word, 0) + 1
        self.totals[bin_index] += len(words)
        self.links[bin_index] += 1

    def expected_q(self, words: Sequence[str]) -> float:
        seen = sum(self.links)
        if not seen:
            return 0.0
        logs = [math.log((links + 1) / (seen + len(BIN_VALUES))) + sum(
                    math.log((counts.get(word, 0) + 1) / (total + self.vocabulary + 1)) for word in words)
                for counts, total, links in zip(self.words, self.totals, self.links)]
        top = max(logs)
        weights = [math.exp(value - top) for value in logs]
        return sum(w * v for w, v in zip(weights, BIN_VALUES)) / sum(weights)


def q_bin(q: float) -> int:
    return min(range(len(BIN_VALUES)), key=lambda index: abs(BIN_VALUES[index] - q))


class QLearningCrawler:
    name = "qlearning"

    def __init__(self) -> None:
        self.trained = NaiveBayesBins()
        self.sample: Counter[str] = Counter()
        self.reset(0)

    def fit(self, links: Sequence[tuple[Candidate, int]], sample_pages: Sequence[str]) -> None:
        self.trained = NaiveBayesBins()
        for candidate, bin_index in links:
            self.trained.add(context_words(candidate), bin_index)
        self.sample = sum((page_words(html) for html in sample_pages), Counter())

    def reset(self, seed: int) -> None:
        # This episode's model starts from the trained one and learns online.
        self.model = self.trained.model_copy(deep=True)
        self.q: dict[str, float] = {}
        self.reward: dict[str, float] = {}
        self.parent: dict[str, str] = {}
        self.children: defaultdict[str, list[str]] = defaultdict(list)
        self.via: dict[str, Candidate] = {}
        self.current = ""

    def _rank(self, candidate: Candidate) -> float:
        return link_similarity(candidate) + GAMMA * self.model.expected_q(context_words(candidate))

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None:
        ranked = max(((self._rank(c), -c.depth, -c.order, c) for c in frontier), key=lambda r: r[:3], default=None)
        if ranked is None or ranked[0] < STOP_BELOW:
            return None
        best = ranked[3]
        self.parent[best.url], self.via[best.url] = self.current, best
        return best

    def observe(self, candidate: Candidate | None, url: str, html: str) -> None:
        """A page was fetched (the homepage, then each click): reward it and back its Q up its parents."""
        key = candidate.url if candidate is not None else url
        self.current = key
        if candidate is None:
            return
        self.reward[key] = link_similarity(candidate) + cosine(page_words(html), self.sample)
        self.children[self.parent.get(key, "")].append(key)
        node = key
        while node in self.reward:
            crawled = [self.q[child] for child in self.children.get(node, []) if child in self.q]
            self.q[node] = self.reward[node] + GAMMA * (sum(crawled) / len(crawled) if crawled else 0.0)
            node = self.parent.get(node, "")
        self.model.add(context_words(candidate), q_bin(min(self.q[key], 1.0)))


def link_similarity(candidate: Candidate, keywords: Sequence[str] = KEYWORDS) -> float:
    return min(keyword_score(candidate, keywords) / 2, 1.0)
