"""Training the list ranker (`sourcewatch train records`) and its cross-validated figures.

Labels come from the Estuka testbed: every candidate of a page (models.records.candidates) is scored by the F1
its records reach against the page's labelled records, as the evaluation scores an extractor
(models.records.evaluation). Cross-validation holds out one category at a time (its sites and queries are
never trained on): the figures `eval records` reports for the ranker are those of each category's pages read
by the ranker trained on the other categories.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from models.records.candidates import candidate_features, page_candidates
from models.records.data import EstukaPage
from models.records.evaluation import ESTUKA_URL, estuka_f1
from models.records.ranker import ListRanker, train_ranker
from models.web.dom import parse_html


@dataclass(frozen=True)
class LabelledPage:
    category: str
    features: np.ndarray
    # Each candidate's F1 against the page's labelled records.
    f1: np.ndarray


def labelled_pages(pages: Sequence[EstukaPage], progress: Callable[[], None] | None = None) -> list[LabelledPage]:
    labelled = []
    for page in pages:
        root = parse_html(page.html)
        candidates = page_candidates(root, ESTUKA_URL)
        features = candidate_features(candidates, root, ESTUKA_URL)
        labelled.append(LabelledPage(page.category, features,
                                     np.array([estuka_f1(c.texts, page.keys) for c in candidates], dtype=np.float32)))
        if progress:
            progress()
    return labelled


def train_list_ranker(labelled: Sequence[LabelledPage], seed: int = 0) -> ListRanker:
    ranker = train_ranker([(page.features, page.f1) for page in labelled], seed)
    ranker.trained_on = {"pages": len(labelled), "categories": sorted({page.category for page in labelled}),
                         "seed": seed}
    return ranker


def rankers_by_held_out_category(labelled: Sequence[LabelledPage], seed: int = 0,
                                 progress: Callable[[str], None] | None = None) -> dict[str, ListRanker]:
    """For each category, the ranker trained on every other category's pages."""
    rankers = {}
    for category in sorted({page.category for page in labelled}):
        if progress:
            progress(category)
        rankers[category] = train_list_ranker([page for page in labelled if page.category != category], seed)
    return rankers
