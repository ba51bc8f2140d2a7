"""Discovery policies behind one interface: from a site's homepage, which link to click next, or stop.

A policy sees the anchors of the page it is on and the frontier (every same-site anchor seen in the episode
and not clicked yet, with the clicks it lies from the homepage) and returns one frontier entry, or None to
stop. The baselines:

- BFS: the shallowest unclicked anchor, in document order (never stops before its budget).
- DFS: the deepest unclicked anchor, the first seen of the deepest page (never stops before its budget).
- Random walk: a random unclicked anchor of the current page, or of the frontier at a dead end.
- Keyword: the anchor whose text and URL path carry the most event/news words of a fixed multilingual list
  (text counts double); stops when no unclicked anchor carries any. The list is general vocabulary, not
  read off the evaluation sites.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class Candidate:
    url: str
    text: str
    tag_path: str
    # Clicks from the homepage to the page it is on, plus one.
    depth: int
    # Order of first sight in the episode (document order within a page).
    order: int


class DiscoveryPolicy(Protocol):
    name: str

    def reset(self, seed: int) -> None: ...

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None: ...

    def observe(self, clicked: Candidate | None, url: str, html: str) -> None:
        """A page was fetched: the homepage (clicked None), then each click's."""


class Unlearned:
    """A policy that learns nothing from what it sees."""

    def reset(self, seed: int) -> None:
        pass

    def observe(self, clicked: Candidate | None, url: str, html: str) -> None:
        pass


class BreadthFirst(Unlearned):
    name = "bfs"

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None:
        return min(frontier, key=lambda c: (c.depth, c.order), default=None)


class DepthFirst(Unlearned):
    name = "dfs"

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None:
        return max(frontier, key=lambda c: (c.depth, -c.order), default=None)


class RandomWalk(Unlearned):
    name = "random"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def reset(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None:
        pool = on_page or frontier
        return self.rng.choice(pool) if pool else None


# Event and news listing words in the languages sourcewatch meets (lower case; matched as words in Latin
# scripts, as substrings in CJK).
KEYWORDS = (
    "event", "events", "news", "calendar", "agenda", "activities", "announcements", "upcoming", "meetups",
    "meetings", "happenings", "whats-on", "what's on", "press", "blog", "posts", "updates", "latest",
    "veranstaltungen", "termine", "aktuelles", "neuigkeiten", "nachrichten", "kalender",
    "événements", "evenements", "actualités", "actualites", "nouvelles",
    "eventos", "noticias", "notícias", "actividades", "atividades", "novedades", "novidades",
    "eventi", "notizie", "novità", "evenementen", "nieuws", "activiteiten", "arrangementer", "nyheter",
    "aktiviteter", "sự kiện", "tin tức", "su-kien", "tin-tuc",
    "イベント", "ニュース", "お知らせ", "新着情報", "行事", "活動", "活动", "最新消息", "新聞", "新闻", "公告",
    "消息", "動態", "动态", "活動訊息",
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def keyword_hits(text: str, keywords: Sequence[str] = KEYWORDS) -> int:
    words = set(re.findall(r"[\w'’-]+", text.lower()))
    lowered = text.lower()
    return sum(1 for keyword in keywords
               if (keyword in lowered if _CJK.search(keyword) or " " in keyword else keyword in words))


def keyword_score(candidate: Candidate, keywords: Sequence[str] = KEYWORDS) -> int:
    path = unquote(urlsplit(candidate.url).path).replace("/", " ").replace("_", " ").replace(".html", " ")
    return 2 * keyword_hits(candidate.text, keywords) + keyword_hits(path, keywords)


class KeywordHeuristic(Unlearned):
    name = "keyword"

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None:
        scored = [(keyword_score(c), -c.depth, -c.order, c) for c in frontier]
        best = max(scored, key=lambda s: s[:3], default=None)
        return best[3] if best is not None and best[0] > 0 else None


BASELINES: dict[str, type] = {"bfs": BreadthFirst, "dfs": DepthFirst, "random": RandomWalk,
                              "keyword": KeywordHeuristic}
