"""The local full-text index of fetched pages and their link graph, in SQLite with FTS5.

Domain discovery searches what sourcewatch has already read: keyword search (BM25 over title and text),
related search (more like this: a page's most telling words as the query), and the link graph's out-links
(forward crawl) and in-links (backward crawl). SQLite's FTS5 does the full-text part — a maintained search
engine, not a hand-written inverted index — and the file can be opened by any process that reads it.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from models.web.dom import normalize_space, parse_html, text_content
from models.web.links import canonical_url, extract_anchors
from schemas.sites import site_of

# Text kept per page (characters): enough for ranking, bounded for a large page.
MAX_TEXT = 20_000
# Words a related search asks for.
RELATED_TERMS = 12
_WORDS = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
# Numeric dates (2026-11-25, 25.11.2026, 11/25/26, 2026年11月25日) and times of day (19:30, 7 pm).
_DATES = re.compile(r"\b(?:\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})")
_TIMES = re.compile(r"\b\d{1,2}(?::\d{2}\s*(?:[ap]\.?m\.?)?|\s*[ap]\.?m\.?)(?!\w)", re.IGNORECASE)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, site TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS pages_text USING fts5(url UNINDEXED, title, text, tokenize = 'unicode61');
CREATE TABLE IF NOT EXISTS links (source TEXT NOT NULL, target TEXT NOT NULL, PRIMARY KEY (source, target));
CREATE INDEX IF NOT EXISTS links_by_target ON links (target);
"""


@dataclass(frozen=True)
class PageText:
    url: str
    site: str
    title: str
    text: str

    def words(self) -> str:
        """What the rankers read: the URL's path words (prefixed `url`), the title, the text, and a token per
        date and per time of day in it — a dated list shows itself as many of them, in any language."""
        path = " ".join(f"url{word.lower()}" for word in _WORDS.findall(unquote(urlsplit(self.url).path)))
        marks = " ".join(["dateword"] * len(_DATES.findall(self.text)) + ["timeword"] * len(_TIMES.findall(self.text)))
        return f"{path} {self.title} {self.text} {marks}"


def page_text(url: str, html: str) -> PageText:
    """A page's title and visible text (scripts and styles left out)."""
    root = parse_html(html)
    if root is None:
        return PageText(url, site_of(url), "", "")
    # Walked, not asked of XPath: lxml lets go of the GIL for an XPath, and the worker's agent waits to take it
    # back (streams.threads).
    title = normalize_space(" ".join(text for element in root.iter("title") for text in element.itertext()))
    # The title is kept apart; scripts and styles are not text.
    for element in list(root.iter("title", "script", "style", "noscript", "template")):
        element.drop_tree()
    return PageText(url, site_of(url), title[:500], normalize_space(text_content(root))[:MAX_TEXT])


class PageIndex:
    def __init__(self, path: Path | str = ":memory:") -> None:
        # Another process may be writing the file (the worker that feeds it): wait for its lock, and allow the
        # feeding agent's executor thread to use the connection (one call at a time).
        self.db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    def copy(self) -> PageIndex:
        """An in-memory copy (an evaluation runs every method from the same first index)."""
        copied = PageIndex()
        self.db.backup(copied.db)
        return copied

    def add(self, url: str, html: str) -> PageText:
        """Index a fetched page (again: its text and out-links replaced)."""
        return self.add_many([(url, html)])[0]

    def add_many(self, pages: Sequence[tuple[str, str]]) -> list[PageText]:
        """Index fetched pages (url, HTML) in one transaction."""
        texts = []
        with self.db:
            for url, html in pages:
                url = canonical_url(url)
                page = page_text(url, html)
                self.db.execute("DELETE FROM pages_text WHERE url = ?", (url,))
                self.db.execute("INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?)",
                                (url, page.site, page.title, page.text))
                self.db.execute("INSERT INTO pages_text VALUES (?, ?, ?)", (url, page.title, page.text))
                self.db.execute("DELETE FROM links WHERE source = ?", (url,))
                self.db.executemany("INSERT OR IGNORE INTO links VALUES (?, ?)",
                                    [(url, canonical_url(anchor.url)) for anchor in extract_anchors(html, url)])
                texts.append(page)
        return texts

    def __len__(self) -> int:
        return self.db.execute("SELECT count() FROM pages").fetchone()[0]

    def pages(self, urls: Iterable[str] | None = None) -> list[PageText]:
        if urls is None:
            rows = self.db.execute("SELECT url, site, title, text FROM pages ORDER BY url").fetchall()
        else:
            wanted = list(urls)
            found = {row[0]: row for row in self.db.execute(
                f"SELECT url, site, title, text FROM pages WHERE url IN ({','.join('?' * len(wanted))})", wanted)}
            rows = [found[url] for url in wanted if url in found]
        return [PageText(*row) for row in rows]

    def site_pages(self, site: str, limit: int = 50) -> list[PageText]:
        """Up to `limit` indexed pages of one site (schemas.sites.site_of's key), shortest URL first."""
        return [PageText(*row) for row in self.db.execute(
            "SELECT url, site, title, text FROM pages WHERE site = ? ORDER BY length(url), url LIMIT ?", (site, limit))]

    def search(self, words: Sequence[str], limit: int = 50) -> list[str]:
        """Pages matching any of the words, best BM25 first."""
        query = " OR ".join(f'"{word.replace(chr(34), "")}"' for word in words if word.strip())
        if not query:
            return []
        return [row[0] for row in self.db.execute(
            "SELECT url FROM pages_text WHERE pages_text MATCH ? ORDER BY bm25(pages_text) LIMIT ?", (query, limit))]

    def related(self, url: str, limit: int = 50) -> list[str]:
        """More like this: pages matching the page's most frequent words, the page itself left out."""
        pages = self.pages([canonical_url(url)])
        if not pages:
            return []
        counts = Counter(word.lower() for word in _WORDS.findall(f"{pages[0].title} {pages[0].text}"))
        terms = [word for word, _ in counts.most_common(RELATED_TERMS)]
        return [found for found in self.search(terms, limit + 1) if found != pages[0].url][:limit]

    def out_links(self, url: str) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT target FROM links WHERE source = ?", (canonical_url(url),))]

    def in_links(self, url: str) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT source FROM links WHERE target = ?", (canonical_url(url),))]

    def edges(self) -> list[tuple[str, str]]:
        """The link graph among indexed pages."""
        return self.db.execute("SELECT l.source, l.target FROM links l JOIN pages p ON p.url = l.target").fetchall()
