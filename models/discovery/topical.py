"""The Q-learning topical crawl (Wang & Wang) of one site: best-first by each link's expected Q.

Q(u) = R(u) + γ · mean Q of u's crawled children. The immediate reward R(u) is the topic similarity of the
link that led to u (its anchor text and URL words against the topic's keywords) plus the cosine between u's
words and the topic's sample (the sample pages' words, or the keywords themselves). A naive-Bayes map from a
link's context to a Q bin (low, middle, high), learned online from every crawled page's backed-up Q, gives
each frontier link its expected Q; the frontier is ordered by link similarity + γ · expected Q, and the
site's crawl ends when the best link's rank is below the Q-learning baseline's STOP_BELOW (a focused crawl
spends no fetch on links it expects nothing of; the evaluation also runs it never stopping).

A link's context is its anchor and URL words (the paper's), and two tokens of where it stands: the tags
around it (`tag:li`, `tag:nav`: the menu and the list of a page are told apart) and the reward bin of the
page it was first seen on (`from:high`: topical locality — relevant pages link to relevant pages). Both are
learned like the words, from this crawl's own pages: nothing is fitted beforehand.

The state (`TopicalState`) is plain data, so the stream can keep it per crawl and site in a table; the crawl
itself is the discovery episode's core (models.discovery.episode: landing, the frontier, the budget) with
this ranking as its choice and no "found" end. The topic similarity is also the stream's relevance judge:
a page whose reward reaches the high bin counts as relevant in its harvest rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from models.discovery.episode import FrontierLink
from models.discovery.policies import KEYWORDS, Candidate
from models.discovery.qlearning import (
    BIN_VALUES,
    GAMMA,
    STOP_BELOW,
    NaiveBayesBins,
    context_words,
    cosine,
    link_similarity,
    page_words,
    q_bin,
)
from schemas.crawl import TOPIC_KEYWORDS, TOPIC_SAMPLE_WORDS, CrawlTopic

# The tags nearest the link (its own `a` left out) that its context names.
CONTEXT_TAGS = 3


def topic_of(words: Sequence[str] = (), sample_pages: Sequence[str] = ()) -> CrawlTopic:
    """A topic from keywords (none: the event/news words) and sample pages' HTML (their most frequent words)."""
    counts: Counter[str] = Counter()
    for html in sample_pages:
        counts.update(page_words(html))
    return CrawlTopic(keywords=[word.lower() for word in words][:TOPIC_KEYWORDS],
                      sample={word: float(n) for word, n in counts.most_common(TOPIC_SAMPLE_WORDS)})


def keywords_of(topic: CrawlTopic) -> Sequence[str]:
    return topic.keywords or KEYWORDS


def vector_of(topic: CrawlTopic) -> Counter[str]:
    return Counter(topic.sample) if topic.sample else Counter(keywords_of(topic))


class TopicalState(BaseModel):
    """One site's topical crawl beside its episode state: the learned map, rewards, Q values and the tree of
    crawled pages (url → the page it was clicked from)."""

    topic: CrawlTopic = Field(default_factory=CrawlTopic)
    model: NaiveBayesBins = Field(default_factory=NaiveBayesBins)
    reward: dict[str, float] = Field(default_factory=dict)
    q: dict[str, float] = Field(default_factory=dict)
    parent: dict[str, str] = Field(default_factory=dict)
    # url → the reward bin of the page where the link was first seen
    seen_from: dict[str, int] = Field(default_factory=dict)
    current: str = ""


# A link as both the offline policies (Candidate) and the stream's episode state (FrontierLink) hold it.
Link = Candidate | FrontierLink


def link_context(link: Link, from_bin: int | None) -> list[str]:
    tags = [tag for tag in link.tag_path.split("/")[:-1] if tag][-CONTEXT_TAGS:]
    return context_words(_candidate(link)) + [f"tag:{tag}" for tag in tags] + (
        [f"from:{from_bin}"] if from_bin is not None else [])


def rank(state: TopicalState, link: Link) -> float:
    """Link similarity + γ · the expected Q of the link's context."""
    return link_similarity(_candidate(link), keywords_of(state.topic)) + GAMMA * state.model.expected_q(
        link_context(link, state.seen_from.get(link.url)))


def choose(state: TopicalState, frontier: Sequence[Link], stop_below: float | None = STOP_BELOW) -> Link | None:
    """The frontier link of the highest rank (shallowest, then first seen, on ties), or None — the crawl of the
    site ends — when its rank is below `stop_below` (None: never before the budget while links remain)."""
    ranked = max(((rank(state, link), -link.depth, -link.order, link) for link in frontier), key=lambda r: r[:3],
                 default=None)
    if ranked is None or (stop_below is not None and ranked[0] < stop_below):
        return None
    state.parent[ranked[3].url] = state.current
    return ranked[3]


def observe(state: TopicalState, via: Link | None, url: str, html: str, on_page: Sequence[Link]) -> float:
    """A page was fetched (`via`: the link clicked to it; None for the seed): its reward, its Q backed up the
    tree of crawled pages, the map learning the link's context → Q bin, and the page's new links remembered
    with the bin of the page they were first seen on. The page's reward."""
    key = via.url if via is not None else url
    state.current = key
    similarity = link_similarity(_candidate(via), keywords_of(state.topic)) if via is not None else 0.0
    reward = similarity + cosine(page_words(html), vector_of(state.topic))
    state.reward[key] = reward
    page_bin = q_bin(min(reward, 1.0))
    for link in on_page:
        state.seen_from.setdefault(link.url, page_bin)
    node = key
    while node in state.reward:
        children = [state.q[child] for child, parent in state.parent.items() if parent == node and child in state.q]
        state.q[node] = state.reward[node] + GAMMA * (sum(children) / len(children) if children else 0.0)
        node = state.parent.get(node, "")
    if via is not None:
        state.model.add(link_context(via, state.seen_from.get(via.url)), q_bin(min(state.q[key], 1.0)))
    return reward


def is_relevant(reward: float) -> bool:
    """The stream's relevance judge: the page's topic similarity reaches the high bin."""
    return q_bin(min(reward, 1.0)) == len(BIN_VALUES) - 1


def _candidate(link: Link) -> Candidate:
    return link if isinstance(link, Candidate) else link.candidate()


class TopicalCrawler:
    """The topical crawl as a policy of offline crawls (models.discovery.topical_evaluation): the same state and
    steps, a page observed once its links are known (they come with the next choice)."""

    name = "qlearning"

    def __init__(self, topic: CrawlTopic | None = None, stop_below: float | None = STOP_BELOW) -> None:
        self.topic = topic or CrawlTopic()
        self.stop_below = stop_below
        self.reset(0)

    def reset(self, seed: int) -> None:
        self.state = TopicalState(topic=self.topic)
        self.fetched: tuple[Candidate | None, str, str] | None = None

    def observe(self, clicked: Candidate | None, url: str, html: str) -> None:
        self.fetched = (clicked, url, html)

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None:
        if self.fetched is not None:
            observe(self.state, *self.fetched, on_page)
            self.fetched = None
        return choose(self.state, frontier, self.stop_below)
