"""The AutoPager baseline (TeamHG-Memex `autopager` 0.3.1): its own link features and CRF, our folds and labels.

AutoPager installs on Python 3.11 unchanged, so this is the package itself, not
a reimplementation: `autopager.model.page_to_features` turns a page's `<a href>`
links into its feature dicts and `autopager.model.get_crf` gives its
sklearn-crfsuite CRF with its published hyper-parameters. It is trained on the
same PAGE / NEXT / OTHER labels as our tagger. AutoPager only ever predicts on
`<a href>` elements, so every other clickable node (buttons, anchors without
href) is OTHER in its output — that is part of what it is compared on.
"""

from __future__ import annotations

from collections.abc import Sequence

import lxml.html
import parsel
from autopager.model import get_crf, page_to_features

from models.pagination.data import LabelledPage, clickable_nodes
from models.web.dom import parse_html


def _links_and_positions(root: lxml.html.HtmlElement) -> tuple[parsel.SelectorList, list[int]]:
    """AutoPager's link sequence for a page, and each link's index among the page's clickable nodes."""
    position = {node: index for index, node in enumerate(clickable_nodes(root))}
    links = parsel.Selector(root=root, type="html").xpath(".//a[@href]")
    return links, [position[link.root] for link in links]


class AutoPagerBaseline:
    name = "autopager"

    def __init__(self, crf) -> None:
        self.crf = crf

    @classmethod
    def train(cls, pages: Sequence[LabelledPage]) -> AutoPagerBaseline:
        sequences, labels = [], []
        for page in pages:
            root = parse_html(page.html)
            if root is None:
                continue
            links, positions = _links_and_positions(root)
            if len(clickable_nodes(root)) != len(page.labels) or not positions:
                continue
            sequences.append(page_to_features(links))
            labels.append([page.labels[i] for i in positions])
        crf = get_crf()
        crf.fit(sequences, labels)
        return cls(crf)

    def predict(self, htmls: Sequence[str]) -> list[list[str]]:
        """The label of every clickable node of each page, like PaginationTagger.predict."""
        results = []
        for html in htmls:
            root = parse_html(html)
            if root is None:
                results.append([])
                continue
            labels = ["OTHER"] * len(clickable_nodes(root))
            links, positions = _links_and_positions(root)
            if positions:
                for index, label in zip(positions, self.crf.predict_single(page_to_features(links))):
                    labels[index] = label
            results.append(labels)
        return results
