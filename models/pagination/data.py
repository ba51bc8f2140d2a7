"""The labelled pagination data (AutoPager and PRNSM format): pages, their clickable nodes, and gold labels.

Format: one CSV row per page (`File Name`, `Encoding`, `Language`, label columns
PREV, PAGE, NEXT, LAST, FIRST holding CSS selectors, `failed`); the page's HTML is
`<html dir>/<File Name>.html`. sourcewatch's labels: NEXT = NEXT; PAGE = PAGE ∪
FIRST ∪ LAST ∪ PREV; every other clickable node (`a`, `button`) is OTHER. A
selector may pick the clickable node itself, an element inside it (a label
span) or one around it (a list item); all three label the node. NEXT wins when
a node is picked as both.
"""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass
from pathlib import Path

import lxml.html
from cssselect import SelectorError
from lxml.cssselect import CSSSelector

from models.web.dom import parse_html
from models.web.links import resolve_href

log = logging.getLogger(__name__)

LABELS = ("OTHER", "PAGE", "NEXT")
# Dataset columns folded into each of our labels; NEXT last so that it wins a tie.
LABEL_COLUMNS = {"PAGE": ("PAGE", "FIRST", "LAST", "PREV"), "NEXT": ("NEXT",)}
CLICKABLE = ("a", "button")
# Where script-driven pagers (an href of "#" or `javascript:`, a button) keep the URL they load.
DATA_TARGETS = ("data-href", "data-url", "data-page-url")


@dataclass(frozen=True)
class LabelledPage:
    name: str
    url: str
    language: str
    html: str
    # The clickable nodes' gold labels, in document order.
    labels: tuple[str, ...]


def clickable_nodes(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """Every `a` and `button` of a document, whole elements, in document order."""
    return [element for element in root.iter(*CLICKABLE)]


def node_target(node: lxml.html.HtmlElement) -> str:
    """Where a clickable node leads, unresolved: its href, else the URL a script-driven pager keeps in a data
    attribute; "" when neither."""
    href = (node.get("href") or "").strip()
    if href and not href.startswith(("#", "javascript:")):
        return href
    return next((node.get(name).strip() for name in DATA_TARGETS if (node.get(name) or "").strip()), "")


def clickable_urls(root: lxml.html.HtmlElement | None, base_url: str) -> list[str]:
    """Where each clickable node of a document leads (node_target), resolved against the page; "" for a node
    that leads nowhere followable — one entry per node of clickable_nodes, in its order."""
    return [resolve_href(base_url, target) or "" if (target := node_target(node)) else ""
            for node in (clickable_nodes(root) if root is not None else [])]


def _selected(root: lxml.html.HtmlElement, selectors: str) -> set:
    chosen: set = set()
    for selector in (part.strip() for part in selectors.split(",")):
        if not selector:
            continue
        try:
            chosen.update(CSSSelector(selector)(root))
        except (SelectorError, SyntaxError, ValueError) as error:
            log.debug("skipping selector %r: %s", selector, error)
    return chosen


def gold_labels(root: lxml.html.HtmlElement, row: dict[str, str]) -> list[str]:
    nodes = clickable_nodes(root)
    labels = ["OTHER"] * len(nodes)
    for label, columns in LABEL_COLUMNS.items():
        chosen = set().union(*(_selected(root, row.get(column) or "") for column in columns))
        if not chosen:
            continue
        for index, node in enumerate(nodes):
            around = any(ancestor in chosen for ancestor in node.iterancestors())
            inside = any(descendant in chosen for descendant in node.iterdescendants())
            if node in chosen or around or inside:
                labels[index] = label
    return labels


def read_html(path: Path, encoding: str) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode(encoding or "utf-8")
    except (LookupError, UnicodeDecodeError):
        return raw.decode("utf-8", errors="replace")


def load_pages(folder: Path) -> list[LabelledPage]:
    """The usable pages of one dataset folder (`data.csv` + `html/`, or `data_all.csv` + `html_all/`)."""
    csv_path = next((folder / name for name in ("data_all.csv", "data.csv") if (folder / name).is_file()), None)
    html_dir = next((folder / name for name in ("html_all", "html") if (folder / name).is_dir()), None)
    if csv_path is None or html_dir is None:
        raise FileNotFoundError(f"{folder} holds no data.csv/data_all.csv with an html/ or html_all/ folder")
    pages = []
    with csv_path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if (row.get("failed") or "").strip():
                continue
            path = html_dir / f"{row['File Name']}.html"
            if not path.is_file():
                log.warning("%s: no %s, page skipped", csv_path.name, path.name)
                continue
            html = read_html(path, row.get("Encoding", ""))
            root = parse_html(html)
            if root is None:
                log.warning("%s: %s does not parse, page skipped", csv_path.name, path.name)
                continue
            pages.append(LabelledPage(row["File Name"], row.get("Page URL", ""), row.get("Language", "") or "en",
                                      html, tuple(gold_labels(root, row))))
    return pages


def load_folders(folders: list[Path]) -> list[LabelledPage]:
    """The pages of several dataset folders; a page URL that an earlier folder already holds is skipped
    (the PRNSM set re-labels most AutoPager pages: list it first to keep its labels)."""
    pages: list[LabelledPage] = []
    seen: set[str] = set()
    for folder in folders:
        for page in load_pages(folder):
            if page.url and page.url in seen:
                continue
            seen.add(page.url)
            pages.append(page)
    return pages
