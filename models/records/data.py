"""Loaders of the real record-extraction data (<data>/records, <data>/sites): pages with what is known of
their records.

- Estuka testbed: `<category>/<site>/<query>-keyword/<page>.htm` + `data records.csv` (one gold record per row,
  its first field usually the title).
- City Scrapers: `labels.jsonl` + `fixtures/`: agency meeting pages with the items their tests assert.
- Site snapshots: a listing page and its pagination pages, with the item links known from the site itself:
  flink's dated post URLs, and for the other sites the listing's own RSS feed (index.xml beside it) where
  its links point to the site.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from models.records.witnesses import WITNESS_PAGES
from models.web.decoding import decode_body

PLACEHOLDER_URL = "https://unknown.invalid/"
_DATED_POST = re.compile(r"/\d{4}/\d{2}/\d{2}/[^/?#]+/?$")
_RSS_ITEM = re.compile(r"<item>.*?<title>([^<]*)</title>.*?<link>([^<]+)</link>", re.DOTALL)


@dataclass(frozen=True)
class EstukaPage:
    path: Path
    category: str
    html: str
    # The first field of each gold record.
    keys: list[str]

    @property
    def site(self) -> str:
        """The site's folder (`<category>/<site>`): its query pages share one template."""
        return str(self.path.parent.parent)


@dataclass(frozen=True)
class CityScrapersPage:
    fixture: str
    url: str
    host: str
    html: str
    role: str
    expected_count: int | None
    complete: bool
    # Asserted items: (title or '', start ISO string or '').
    items: list[tuple[str, str]] = field(default_factory=list)
    # The spider whose tests use the page (pages of one spider are one site even where their URL is unknown).
    spider: str = ""

    @property
    def site(self) -> str:
        """The host where the URL is known, else the spider: the unit pages are grouped by (CV, witnesses)."""
        return self.host if self.url != PLACEHOLDER_URL else f"spider:{self.spider}"


@dataclass(frozen=True)
class SnapshotList:
    name: str
    # (url, html) of the listing page and its further pages, in list order.
    pages: list[tuple[str, str]]
    item_urls: set[str]
    # Titles of the feed's items where known (a listing may link its items elsewhere than the feed does).
    item_titles: dict[str, str] = field(default_factory=dict)
    # (url, html) of a few other pages of the site, as a discovery crawl meets them: the pages the homepage
    # links to, in its order (models.records.witnesses).
    witness_pages: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class SnapshotSourcePage:
    """A labelled source page of a site snapshot, as a user's `watch URL` reads it: alone."""

    name: str
    url: str
    html: str
    # The snapshot's files by URL path: what the site's own server would answer (its feeds among them).
    root: Path
    base: str

    def file_for(self, url: str) -> Path | None:
        """The snapshot file the site serves at `url`, a page or not (its feeds); None off the site."""
        return _site_file(self.root, self.base, url, pages_only=False)


def read_html(path: Path) -> str:
    return decode_body(path.read_bytes())[0]


def _read_csv_text(path: Path) -> str:
    """The gold CSV's text, each line read as UTF-8 where it is and as Windows-1252 where not (a few files
    mix both)."""
    lines = []
    for raw in path.read_bytes().removeprefix(b"\xef\xbb\xbf").splitlines(keepends=True):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(raw.decode("cp1252", errors="replace"))
    return "".join(lines)


def is_city_scrapers(directory: Path) -> bool:
    return (directory / "labels.jsonl").is_file()


def load_estuka(directory: Path) -> Iterator[EstukaPage]:
    """Every case with one top-level saved page and a gold CSV (6 cases of the testbed have no page)."""
    for gold in sorted(directory.rglob("data records.csv")):
        pages = sorted(gold.parent.glob("*.htm")) + sorted(gold.parent.glob("*.html"))
        if not pages:
            continue
        rows = csv.reader(io.StringIO(_read_csv_text(gold)))
        # The CSV keeps some entities as the page source had them (&amp;); the page's text has them decoded.
        keys = [html.unescape(first) for first in (next((f for f in row if f.strip()), "") for row in rows) if first]
        category = gold.relative_to(directory).parts[0]
        yield EstukaPage(path=pages[0], category=category, html=read_html(pages[0]), keys=keys)


def load_city_scrapers(directory: Path) -> Iterator[CityScrapersPage]:
    """The HTML fixtures with their asserted items (JSON/ICS/XML API responses are not listing pages)."""
    for line in (directory / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        label = json.loads(line)
        path = directory / "fixtures" / label["fixture"]
        if label["format"] != "html" or not path.is_file():
            continue
        url = label["url"] or PLACEHOLDER_URL
        items = [(item.get("title") or "", item.get("start") or "") for item in label["items"]]
        yield CityScrapersPage(
            fixture=label["fixture"], url=url, host=url.split("/")[2], html=read_html(path),
            role=label["page_role"] or "listing", expected_count=label["expected_count"],
            complete=bool(label["complete"]), items=[item for item in items if any(item)],
            spider=(label["test_file"] or label["fixture"]).removeprefix("test_").removesuffix(".py"))


def load_snapshot_lists(sites: Path) -> Iterator[SnapshotList]:
    """The listings of the snapshots whose items are known: iot-eclipse events and news (RSS) and flink posts
    (dated post URLs linked from the listing pages)."""
    for site_dir in sorted(sites.iterdir()):
        manifest_path = site_dir / "manifest.json"
        if not manifest_path.is_file():
            continue
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if urlsplit(manifest.get("base_url") or "").scheme not in ("http", "https"):
            continue
        base = manifest["base_url"].rstrip("/") + "/"
        root = site_dir / "site"
        for source in manifest.get("source_pages", []):
            paths = [source["path"]] + [p["path"] for p in manifest.get("pagination", []) if p["of"] == source["path"]]
            pages = [(urljoin(base, _url_path(path)), read_html(root / path)) for path in paths]
            feed = root / Path(source["path"]).parent / "index.xml"
            titles: dict[str, str] = {}
            if site_dir.name == "flink-apache-org":
                hrefs = (m for _, text in pages for m in re.findall(r'href="([^"]+)"', text))
                items = {urljoin(base, href) for href in hrefs if _DATED_POST.search(href)}
            elif feed.is_file():
                feed_items = _RSS_ITEM.findall(feed.read_text(encoding="utf-8"))
                # Feeds built for a local preview link to localhost, not to the site: their items are unknown.
                titles = {html.unescape(link.strip()): html.unescape(title.strip()) for title, link in feed_items
                          if urlsplit(link.strip()).netloc == urlsplit(base).netloc}
                items = set(titles)
            else:
                continue
            if items:
                witnesses = _linked_pages(root, manifest, base, {url for url, _ in pages})
                yield SnapshotList(name=f"{site_dir.name}/{source['url'].strip('/')}", pages=pages,
                                   item_urls=items, item_titles=titles, witness_pages=witnesses)


def load_source_pages(sites: Path) -> Iterator[SnapshotSourcePage]:
    """Every labelled source page of the snapshots, at the address its site serves it from (the site's first
    host where the snapshot names no base URL)."""
    for site_dir in sorted(sites.iterdir()):
        manifest_path = site_dir / "manifest.json"
        if not manifest_path.is_file():
            continue
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        base = manifest.get("base_url") or ""
        if urlsplit(base).scheme not in ("http", "https"):
            host = (manifest.get("site_hosts") or [f"{site_dir.name}.invalid"])[0]
            base = f"https://{host}{manifest.get('serve_prefix') or '/'}"
        base = base.rstrip("/") + "/"
        for source in manifest.get("source_pages", []):
            file = site_dir / "site" / source["path"]
            if file.is_file():
                yield SnapshotSourcePage(name=f"{site_dir.name}/{source['path']}",
                                         url=urljoin(base, _url_path(source["path"])), html=read_html(file),
                                         root=site_dir / "site", base=base)


def _linked_pages(root: Path, manifest: dict, base: str, listing_urls: set[str], most: int = WITNESS_PAGES
                  ) -> list[tuple[str, str]]:
    """The first pages of the site the homepage links to, other than the listing's own pages."""
    home_url = urljoin(base, _url_path(manifest["homepage"]))
    found: dict[str, str] = {}
    for href in re.findall(r'href="([^"#]+)"', read_html(root / manifest["homepage"])):
        url = urljoin(home_url, html.unescape(href))
        file = _site_file(root, base, url)
        if url in listing_urls or url == home_url or url in found or file is None:
            continue
        found[url] = read_html(file)
        if len(found) == most:
            break
    return list(found.items())


def _site_file(root: Path, base: str, url: str, pages_only: bool = True) -> Path | None:
    """The snapshot file an internal URL of the site serves, if any (a directory serves its index.html; with
    `pages_only`, HTML files only)."""
    if not url.startswith(base):
        return None
    path = root / urlsplit(url).path.removeprefix(urlsplit(base).path).lstrip("/")
    for file in (path, path / "index.html"):
        if file.is_file() and (not pages_only or file.suffix in (".html", ".htm")):
            return file
    return None


def _url_path(path: str) -> str:
    """The URL path that serves a file (a directory's index.html is served at the directory)."""
    return path[: -len("index.html")] if path.endswith("index.html") else path
