"""Per-node features of the PRNSM pagination tagger (Wu & Chang), from a page's clickable nodes.

For each `a`/`button` in document order: its parent tag, the character n-grams
(2–4) of its class names, of its href's query keys (values ignored) and of its
text, and the paper's 8 heuristics. N-grams are hashed with CRC-32 (stable
across processes); the tagger folds the hashes into its buckets, embeds and
average-pools them. The text n-grams are the built-in text encoder; a
pretrained sentence encoder plugs in beside them.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

import lxml.html

from models.pagination_data import clickable_nodes

MAX_NGRAMS = 64
_YEAR = re.compile(r"(?<!\d)(19|20)\d\d(?!\d)")
_SPACES = re.compile(r"\s+")
HEURISTICS = 8


@dataclass(frozen=True)
class NodeFeatures:
    parent_tag: str
    class_ngrams: tuple[int, ...]
    query_ngrams: tuple[int, ...]
    text_ngrams: tuple[int, ...]
    heuristics: tuple[float, ...]


def hashed_ngrams(tokens: list[str], sizes: tuple[int, ...] = (2, 3, 4)) -> tuple[int, ...]:
    """CRC-32 hashes of the character n-grams of each token, at most MAX_NGRAMS (the model folds them
    into its own number of buckets)."""
    grams: list[int] = []
    for token in tokens:
        padded = f"<{token}>"
        for size in sizes:
            for start in range(max(1, len(padded) - size + 1)):
                grams.append(zlib.crc32(padded[start:start + size].encode()))
                if len(grams) >= MAX_NGRAMS:
                    return tuple(grams)
    return tuple(grams)


def node_text(node: lxml.html.HtmlElement) -> str:
    text = node.text_content() or node.get("value") or node.get("aria-label") or node.get("title") or ""
    return _SPACES.sub(" ", text).strip()[:80]


def page_features(root: lxml.html.HtmlElement) -> list[NodeFeatures]:
    nodes = clickable_nodes(root)
    has_href = [bool((node.get("href") or "").strip()) for node in nodes]
    features = []
    for index, node in enumerate(nodes):
        href = (node.get("href") or "").strip()
        classes = (node.get("class") or "").lower().split()
        try:
            keys = [key.lower() for key, _ in parse_qsl(urlsplit(href).query, keep_blank_values=True)]
        except ValueError:
            keys = []
        text = node_text(node)
        lowered_href = href.lower()
        heuristics = (
            float(any("disabled" in name for name in classes) or node.get("disabled") is not None),
            float("page" in lowered_href),
            float(any(character.isdigit() for character in href)),
            float(bool(_YEAR.search(href))),
            min(len(keys), 2) / 2,
            float(text.isalnum()),
            float(index > 0 and has_href[index - 1]),
            float(index + 1 < len(nodes) and has_href[index + 1]),
        )
        parent = node.getparent()
        features.append(NodeFeatures(
            parent_tag=str(parent.tag).lower() if parent is not None else "",
            class_ngrams=hashed_ngrams(classes),
            query_ngrams=hashed_ngrams(keys),
            text_ngrams=hashed_ngrams(text.lower().split() or [""]),
            heuristics=heuristics,
        ))
    return features
