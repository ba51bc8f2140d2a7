"""Training the list ranker (`sourcewatch train records`) and its cross-validated figures.

Every candidate of a labelled page (models.records.candidates) is scored against the page's labels as the
evaluation scores an extractor (models.records.evaluation): on the Estuka testbed by the F1 its records reach
against the page's records; on City Scrapers by the share of the asserted items its records show, times the
agreement of its record count with the page's known count where the tests state one (recall alone rewards a
coarse candidate). Each page is read with its witnesses (the site's other pages in the data set), as the
stream reads a page with the site's other fetched pages.

Cross-validation folds: each Estuka category, and City Scrapers' sites (host, or spider where the URL is
unknown) in CITY_SCRAPERS_FOLDS groups — a site's pages are never trained on when they are read. The figures
`eval records` reports for the ranker are those of each fold read by the ranker trained on the other folds.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from models.records.candidates import candidate_features, page_candidates
from models.records.data import CityScrapersPage, EstukaPage
from models.records.evaluation import ESTUKA_URL, asserted_found, estuka_f1
from models.records.ranker import ListRanker, train_ranker
from models.records.witnesses import Fingerprint
from models.web.dom import parse_html

CITY_SCRAPERS_FOLDS = 4
Progress = Callable[[], None] | None


@dataclass(frozen=True)
class LabelledPage:
    # The cross-validation fold the page belongs to.
    fold: str
    features: np.ndarray
    # Each candidate's score against the page's labels (0…1).
    target: np.ndarray


def estuka_fold(page: EstukaPage) -> str:
    return f"estuka {page.category}"


def city_scrapers_fold(page: CityScrapersPage) -> str:
    return f"city-scrapers {zlib.crc32(page.site.encode()) % CITY_SCRAPERS_FOLDS}"


def _candidates(html: str, url: str, witness: Fingerprint):
    root = parse_html(html)
    candidates = page_candidates(root, url)
    # Every candidate, the small ones the stream leaves undescribed (candidates.shortlist) too: they are the
    # ranker's easy negatives, and training on the shortlist alone moved its CV figures (Estuka F1 0.874 →
    # 0.869, City Scrapers recall 0.663 → 0.625, 2026-11-26) although no page's list is among them.
    return candidates, candidate_features(candidates, root, url, witness)


def estuka_labelled(pages: Sequence[EstukaPage], witnesses: Sequence[Fingerprint],
                    progress: Progress = None) -> list[LabelledPage]:
    labelled = []
    for page, witness in zip(pages, witnesses, strict=True):
        candidates, features = _candidates(page.html, ESTUKA_URL, witness)
        labelled.append(LabelledPage(estuka_fold(page), features, np.array(
            [estuka_f1(c.texts, page.keys) for c in candidates], dtype=np.float32)))
        if progress:
            progress()
    return labelled


def city_scrapers_target(page: CityScrapersPage, texts: Sequence[str]) -> float:
    score = asserted_found(page, texts) / len(page.items) if page.items else 0.0
    if page.expected_count:
        score *= min(len(texts), page.expected_count) / max(len(texts), page.expected_count)
    return score


def city_scrapers_labelled(pages: Sequence[CityScrapersPage], witnesses: Sequence[Fingerprint],
                           progress: Progress = None) -> list[LabelledPage]:
    """The listing pages with asserted items (others teach nothing about which candidate is the list)."""
    labelled = []
    for page, witness in zip(pages, witnesses, strict=True):
        if page.items and page.role == "listing":
            candidates, features = _candidates(page.html, page.url, witness)
            labelled.append(LabelledPage(city_scrapers_fold(page), features, np.array(
                [city_scrapers_target(page, c.texts) for c in candidates], dtype=np.float32)))
        if progress:
            progress()
    return labelled


def train_list_ranker(labelled: Sequence[LabelledPage], seed: int = 0) -> ListRanker:
    ranker = train_ranker([(page.features, page.target) for page in labelled], seed)
    ranker.trained_on = {"pages": len(labelled), "folds": sorted({page.fold for page in labelled}), "seed": seed}
    return ranker


def rankers_by_held_out_fold(labelled: Sequence[LabelledPage], folds: Sequence[str], seed: int = 0,
                             progress: Callable[[str], None] | None = None) -> dict[str, ListRanker]:
    """For each fold, the ranker trained on every other fold's pages (a fold may hold no labelled page)."""
    rankers = {}
    for fold in sorted(set(folds)):
        if progress:
            progress(fold)
        rankers[fold] = train_list_ranker([page for page in labelled if page.fold != fold], seed)
    return rankers
