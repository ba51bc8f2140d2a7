"""Evaluation of the pagination tagger, with the AutoPager baseline trained on exactly the same pages.

Three protocols: domain-grouped cross-validation; a train/test split by
language (zero-shot: train on some languages, test on the others); and a given
model on held-out pages. Features are computed once per page and shared by
every fold.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence

from models.pagination.autopager import AutoPagerBaseline
from models.pagination.data import LabelledPage
from models.pagination.features import clear_caches
from models.pagination.metrics import score
from models.pagination.tagger import EPOCHS, PageFeatures, PaginationTagger, features_of, train
from schemas.sites import site_of

Progress = Callable[[str], None]


def domain_folds(pages: Sequence[LabelledPage], folds: int, seed: int = 0) -> list[list[int]]:
    """Page indices per fold; all pages of a registered domain fall in the same fold."""
    by_domain: dict[str, list[int]] = defaultdict(list)
    for index, page in enumerate(pages):
        by_domain[site_of(page.url) or page.name].append(index)
    domains = sorted(by_domain)
    random.Random(seed).shuffle(domains)
    assigned: list[list[int]] = [[] for _ in range(folds)]
    for domain in domains:  # shuffled, each to the smallest fold so far
        min(assigned, key=len).extend(by_domain[domain])
    return assigned


def report(pages: Sequence[LabelledPage], predicted: Sequence[Sequence[str]]) -> dict:
    gold = [list(page.labels) for page in pages]
    result = score(gold, predicted)
    result["macro_paginated_only"] = score(gold, predicted, only_paginated=True)["macro"]
    languages = sorted({page.language for page in pages})
    if len(languages) > 1:
        result["by_language"] = {
            language: score([g for g, p in zip(gold, pages) if p.language == language],
                            [r for r, p in zip(predicted, pages) if p.language == language])["macro"]["avg_f1"]
            for language in languages
        }
        result["by_language_mean"] = round(sum(result["by_language"].values()) / len(languages), 4)
    return result


class _Comparison:
    """Predictions of our tagger and, when asked, of the baseline, filled in split by split."""

    def __init__(self, pages: Sequence[LabelledPage], baseline: bool, **hyper) -> None:
        self.pages = pages
        self.baseline = baseline
        self.hyper = hyper
        self.features: list[PageFeatures] = [features_of(page.html, page.url) for page in pages]
        self.ours: list[list[str]] = [[] for _ in pages]
        self.theirs: list[list[str]] = [[] for _ in pages]

    def split(self, train_indices: Sequence[int], test_indices: Sequence[int], epochs: int) -> None:
        examples = [(self.features[i], list(self.pages[i].labels)) for i in train_indices if self.features[i]]
        model = train(examples, epochs=epochs, **self.hyper)
        for index, labels in zip(test_indices, model.predict_features([self.features[i] for i in test_indices])):
            self.ours[index] = labels
        if self.baseline:
            autopager = AutoPagerBaseline.train([self.pages[i] for i in train_indices])
            for index, labels in zip(test_indices, autopager.predict([self.pages[i].html for i in test_indices])):
                self.theirs[index] = labels

    def result(self, indices: Sequence[int], protocol: str) -> dict:
        chosen = [self.pages[i] for i in indices]
        result = report(chosen, [self.ours[i] for i in indices])
        result["model"] = {key: value for key, value in self.hyper.items()}
        if self.baseline:
            result["baseline"] = report(chosen, [self.theirs[i] for i in indices]) | {"name": AutoPagerBaseline.name}
        result["protocol"] = protocol
        return result


def cross_validate(pages: Sequence[LabelledPage], folds: int = 5, fold_seed: int = 0, epochs: int = EPOCHS,
                   baseline: bool = False, progress: Progress | None = None, **hyper) -> dict:
    """Domain-grouped K-fold CV; fold_seed shuffles the domains into folds, `hyper` goes to train()."""
    comparison = _Comparison(pages, baseline, **hyper)
    for number, test in enumerate(domain_folds(pages, folds, fold_seed), start=1):
        held_out = set(test)
        comparison.split([i for i in range(len(pages)) if i not in held_out], test, epochs)
        if progress is not None:
            progress(f"fold {number}/{folds} done ({len(test)} pages held out)")
    return comparison.result(range(len(pages)),
                             f"{folds}-fold cross-validation grouped by registered domain, fold seed {fold_seed}")


def zero_shot(pages: Sequence[LabelledPage], train_languages: Sequence[str], epochs: int = EPOCHS,
              baseline: bool = False, **hyper) -> dict:
    """Train on the pages in train_languages, test on every other page; per-language macro F1."""
    comparison = _Comparison(pages, baseline, **hyper)
    train_indices = [i for i, page in enumerate(pages) if page.language in train_languages]
    test_indices = [i for i, page in enumerate(pages) if page.language not in train_languages]
    if not train_indices or not test_indices:
        raise ValueError(f"zero-shot needs pages in {', '.join(train_languages)} and in other languages")
    comparison.split(train_indices, test_indices, epochs)
    return comparison.result(test_indices, f"zero-shot: trained on {', '.join(train_languages)} "
                                           f"({len(train_indices)} pages), tested on every other language")


def evaluate_held_out(model: PaginationTagger, pages: Sequence[LabelledPage],
                      baseline_training: Sequence[LabelledPage] | None = None) -> dict:
    """A trained model on held-out pages; the baseline, when asked, is trained on baseline_training."""
    result = report(pages, model.predict([page.html for page in pages], [page.url for page in pages]))
    if baseline_training is not None:
        autopager = AutoPagerBaseline.train(baseline_training)
        result["baseline"] = report(pages, autopager.predict([page.html for page in pages])) | {
            "name": AutoPagerBaseline.name}
    result["protocol"] = "the given model on all the given pages"
    return result


def tagging_throughput(model: PaginationTagger, pages: Sequence[LabelledPage], runs: int = 3) -> dict:
    """Pages and nodes tagged per second (parsing, features, encoder, BiLSTM and CRF decoding), each figure the
    median of `runs` timed passes over every page after one untimed pass: warm (the features' n-gram caches and
    the text encoder's cache as the passes left them: a revisit re-reads the same page), cold features (the
    n-gram caches emptied before each pass, the encoder's kept) and cold (both emptied: pages never seen, every
    node text embedded for the first time)."""
    import statistics
    import time

    import torch

    htmls, urls = [page.html for page in pages], [page.url for page in pages]
    model.predict(htmls, urls)

    def median_pass(empty_features: bool = False, empty_encoder: bool = False) -> tuple[float, list[list[str]]]:
        seconds = []
        for _ in range(runs):
            if empty_features:
                clear_caches()
            if empty_encoder and model.encoder is not None:
                model.encoder.clear()
            started = time.perf_counter()
            labels = model.predict(htmls, urls)
            seconds.append(time.perf_counter() - started)
        return statistics.median(seconds), labels

    warm, labels = median_pass()
    cold_features, _ = median_pass(empty_features=True)
    cold, _ = median_pass(empty_features=True, empty_encoder=True)
    nodes = sum(len(page) for page in labels)
    return {"pages": len(pages), "nodes": nodes, "runs": runs, "seconds_median": round(warm, 3),
            "pages_per_s": round(len(pages) / warm, 1), "nodes_per_s": round(nodes / warm, 1),
            "seconds_median_cold_features": round(cold_features, 3),
            "pages_per_s_cold_features": round(len(pages) / cold_features, 1),
            "seconds_median_cold": round(cold, 3), "pages_per_s_cold": round(len(pages) / cold, 1),
            "torch_threads": torch.get_num_threads()}


def continuation_picks(pages: Sequence[LabelledPage], progress: Progress = lambda _: None) -> dict:
    """The URL continuation rule (models.pagination.continuation, the fallback for pagers the tagger leaves
    untagged) on labelled pages, each read as the stream reads a watched list: its records by the record
    extractor, its links resolved as the tagger's are. A pick the labels mark NEXT or PAGE leads to another
    page of the list; one they mark OTHER, or any pick on a page without pagination, would be read as the
    list's next page wrongly."""
    from models.pagination.continuation import next_slice_link
    from models.web.dom import parse_html

    picks: dict[str, int] = defaultdict(int)
    wrong: list[dict] = []
    for page in pages:
        found = next_slice_link(parse_html(page.html), page.html, page.url)
        progress(page.name)
        if found is None:
            continue
        index, url = found
        paginated = any(label != "OTHER" for label in page.labels)
        label = page.labels[index] if index < len(page.labels) else "OTHER"
        picks[label if paginated else "on_unpaginated"] += 1
        if label == "OTHER":
            wrong.append({"page": page.url, "link": url})
    right = picks["NEXT"] + picks["PAGE"]
    made = right + picks["OTHER"] + picks["on_unpaginated"]
    return {"pages": len(pages), "paginated": sum(any(label != "OTHER" for label in page.labels) for page in pages),
            "picks": made, "picks_next": picks["NEXT"], "picks_page": picks["PAGE"],
            "picks_other": picks["OTHER"], "picks_unpaginated": picks["on_unpaginated"],
            "precision": round(right / made, 3) if made else None, "wrong": wrong}
