"""`sourcewatch retrain classifier`: the source-page classifier retrained with people's verdicts on found
sources as labels, and swapped in only if it does better.

Verdicts (`POST /api/v1/sources/{id}/verdict`) are replayed from sources.verdicts, a page's latest verdict
counting; each page's HTML is its latest successful fetch replayed from pages.fetched (a verdict whose page
the topic no longer holds is reported, not guessed). Two recipes are compared, each the way the shipped
classifier is trained:
- without verdicts: the labelled sites alone (what the current classifier is);
- with verdicts: the labelled sites and the verdict pages.
Both are scored on the same site-grouped folds of the labelled sites (verdict pages are TRAIN_ONLY: training
data in every fold), and on the verdict pages themselves in folds grouped by their site, each fold read by a
classifier that never saw a verdict of its sites. The candidate replaces the current classifier when it agrees
with more held-out verdicts and is not worse on the labelled sites beyond what chance in their sample explains
(the 95 % interval of its F1 change, sites resampled with both recipes paired, reaches zero): it learned what
people told it without forgetting what the labels say. A fixed margin would be a threshold tuned by hand; one
site's page more or less moves F1 by about 0.01 on the 36-site data. It is written to
<home>/models/classifier.pt, which workers load on their next start.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from models.discovery.classifier import (
    TRAIN_ONLY,
    LabelledPage,
    SourcePageClassifier,
    cross_validated_predictions,
    page_vectors,
    scores,
    train_classifier,
)
from models.text_encoders import TextEncoder
from schemas.crawl import PageFetched
from schemas.links import SourceVerdict


@dataclass
class VerdictPages:
    pages: list[LabelledPage]
    # Pages with a verdict whose fetched HTML the topic no longer holds (or never held: a failed fetch).
    without_page: list[str]


@dataclass
class ClassifierRetrainResult:
    verdicts: int
    verdict_sites: int
    without_page: list[str]
    labelled_sites: int
    # Site-grouped CV on the labelled sites, and the verdict pages held out by their site, per recipe.
    labelled: dict[str, dict]
    # 95 % interval of the labelled sites' F1 with the verdicts minus without (sites resampled, paired).
    labelled_f1_change: tuple[float, float]
    verdicts_held_out: dict[str, dict]
    better: bool
    swapped: bool = False
    written_to: str | None = None
    reasons: list[str] = field(default_factory=list)


def verdict_pages(verdicts: Sequence[SourceVerdict], fetched: Sequence[PageFetched]) -> VerdictPages:
    """Each judged page's latest verdict with its latest successfully fetched HTML (by its URL or the URL it
    was redirected to), as a training-only labelled page."""
    latest: dict[str, SourceVerdict] = {}
    for verdict in sorted(verdicts, key=lambda verdict: verdict.created_at):
        latest[verdict.url] = verdict
    html: dict[str, str] = {}
    for page in sorted(fetched, key=lambda page: page.fetched_at_ms):
        if page.ok and page.body:
            for url in {page.url, page.final_url} & latest.keys():
                html[url] = page.body
    pages = []
    for url, verdict in latest.items():
        if url in html:
            parts = urlsplit(url)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            pages.append(LabelledPage(f"{TRAIN_ONLY}{verdict.site}", path or "/", html[url], verdict.is_source))
    return VerdictPages(pages, sorted(latest.keys() - html.keys()))


def _predict(vectors: np.ndarray, labels: np.ndarray, groups: Sequence[str], test_vectors: np.ndarray) -> np.ndarray:
    return train_classifier(vectors, labels, groups).probability(test_vectors) >= 0.5


def verdicts_held_out(base: Sequence[LabelledPage], base_vectors: np.ndarray, verdicts: Sequence[LabelledPage],
                      verdict_vectors: np.ndarray, folds: int, seed: int = 0) -> dict[str, dict]:
    """The verdict pages read by each recipe: without verdicts (every labelled site, as the current
    classifier), and with the verdicts of the other folds' sites (folds grouped by the verdict's site)."""
    labels = np.array([page.source for page in verdicts])
    sites = sorted({page.site for page in verdicts})
    random.Random(seed).shuffle(sites)
    fold_of = {site: index % folds for index, site in enumerate(sites)}
    with_verdicts = np.zeros(len(verdicts), dtype=bool)
    for fold in range(folds):
        test = np.array([fold_of[page.site] == fold for page in verdicts])
        trained = [*base, *(page for page, held in zip(verdicts, test, strict=True) if not held)]
        with_verdicts[test] = _predict(np.concatenate([base_vectors, verdict_vectors[~test]]),
                                       np.array([page.source for page in trained]),
                                       [page.site for page in trained], verdict_vectors[test])
    without = _predict(base_vectors, np.array([page.source for page in base]), [page.site for page in base],
                       verdict_vectors)
    return {"without": scores(without, labels),
            "with": scores(with_verdicts, labels)}


def f1_change_interval(sites: Sequence[str], labels: np.ndarray, without: np.ndarray, with_: np.ndarray,
                       rounds: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The 95 % bootstrap interval of F1(with_) − F1(without) over these test pages, resampling their sites
    (a site's pages go together, as the folds keep them) with the same draw for both."""
    by_site: dict[str, list[int]] = {}
    for index, site in enumerate(sites):
        by_site.setdefault(site, []).append(index)
    groups = [np.array(indices) for indices in by_site.values()]
    rng = np.random.default_rng(seed)
    changes = []
    for _ in range(rounds):
        drawn = np.concatenate([groups[i] for i in rng.integers(len(groups), size=len(groups))])
        changes.append(scores(with_[drawn], labels[drawn])["f1"] - scores(without[drawn], labels[drawn])["f1"])
    low, high = np.percentile(changes, [2.5, 97.5])
    return round(float(low), 4), round(float(high), 4)


def compare_recipes(base: Sequence[LabelledPage], judged: VerdictPages, encoder: TextEncoder, page_input: str,
                    folds: int = 5, progress: Callable[[str], None] = lambda _: None) -> ClassifierRetrainResult:
    """Both recipes on the labelled sites and on the held-out verdicts (see the module), and whether the one
    with the verdicts is better."""
    verdict_sites = sorted({page.site for page in judged.pages})
    if len(verdict_sites) < 2:
        raise ValueError(f"verdicts on {len(verdict_sites)} site(s) with their page on pages.fetched: at least 2 "
                         "are needed to hold some out")
    labelled_sites = len({page.site for page in base})
    if labelled_sites < folds:
        raise ValueError(f"{labelled_sites} labelled sites: at least {folds} are needed for {folds} folds")
    progress(f"encoding {len(base)} labelled pages and {len(judged.pages)} judged ones with {encoder.name}")
    base_vectors = page_vectors(base, encoder, page_input)
    verdict_vectors = page_vectors(judged.pages, encoder, page_input)
    base_labels = np.array([page.source for page in base])
    progress(f"cross-validating both recipes on {labelled_sites} labelled sites ({folds} folds)")
    without, tested = cross_validated_predictions(base, base_vectors, folds)
    with_verdicts, _ = cross_validated_predictions([*base, *judged.pages],
                                                   np.concatenate([base_vectors, verdict_vectors]), folds)
    with_verdicts = with_verdicts[: len(base)]  # the verdict pages are never test pages
    labels, sites = base_labels[tested], [page.site for page, test in zip(base, tested, strict=True) if test]
    labelled = {"without": scores(without[tested], labels), "with": scores(with_verdicts[tested], labels)}
    f1_change = f1_change_interval(sites, labels, without[tested], with_verdicts[tested])
    progress(f"reading the {len(judged.pages)} judged pages held out by their site")
    held_out = verdicts_held_out(base, base_vectors, judged.pages, verdict_vectors,
                                 min(folds, len(verdict_sites)))
    reasons = []
    if held_out["with"]["accuracy"] <= held_out["without"]["accuracy"]:
        reasons.append(f"held-out verdicts: accuracy {held_out['with']['accuracy']} with them vs "
                       f"{held_out['without']['accuracy']} without")
    if f1_change[1] < 0:
        reasons.append(f"labelled sites: F1 {labelled['with']['f1']} with the verdicts vs "
                       f"{labelled['without']['f1']} without (change within {f1_change[0]}…{f1_change[1]}, below 0)")
    return ClassifierRetrainResult(len(judged.pages), len(verdict_sites), judged.without_page, labelled_sites,
                                   labelled, f1_change, held_out, better=not reasons, reasons=reasons)


def retrain_classifier(base: Sequence[LabelledPage], judged: VerdictPages, current: SourcePageClassifier,
                       out: Path, dry_run: bool, folds: int = 5,
                       progress: Callable[[str], None] = lambda _: None) -> ClassifierRetrainResult:
    """Compare the recipes with the current classifier's encoder and page input, and write the candidate, trained
    on every labelled and judged page, to `out` when it is better."""
    result = compare_recipes(base, judged, current.encoder, current.page_input, folds, progress)
    if result.better and not dry_run:
        pages = [*base, *judged.pages]
        # The encoder caches its texts: the pages are not encoded again.
        model = train_classifier(page_vectors(pages, current.encoder, current.page_input),
                                 np.array([page.source for page in pages]), [page.site for page in pages])
        trained_on = sorted({page.site for page in pages})
        candidate = SourcePageClassifier(model, current.encoder, current.threshold, trained_on, current.page_input)
        out.parent.mkdir(parents=True, exist_ok=True)
        candidate.save(out)
        result.swapped, result.written_to = True, str(out)
    return result
