"""Domain-grouped cross-validation and held-out evaluation of the pagination tagger."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence

from models.pagination_data import LabelledPage
from models.pagination_metrics import score
from models.pagination_tagger import PaginationTagger, train
from schemas.sites import site_of


def domain_folds(pages: Sequence[LabelledPage], folds: int, seed: int = 0) -> list[list[int]]:
    """Page indices per fold; all pages of a registered domain fall in the same fold."""
    by_domain: dict[str, list[int]] = defaultdict(list)
    for index, page in enumerate(pages):
        by_domain[site_of(page.url) or page.name].append(index)
    domains = sorted(by_domain)
    random.Random(seed).shuffle(domains)
    assigned: list[list[int]] = [[] for _ in range(folds)]
    for domain in domains:  # largest-first would balance better; shuffled round-robin keeps it simple
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
    return result


def cross_validate(pages: Sequence[LabelledPage], folds: int = 5, seed: int = 0, epochs: int = 12,
                   progress: Callable[[str], None] | None = None) -> dict:
    predicted: list[list[str]] = [[] for _ in pages]
    for number, test in enumerate(domain_folds(pages, folds, seed), start=1):
        held_out = set(test)
        model = train([page for i, page in enumerate(pages) if i not in held_out], epochs=epochs)
        for index, labels in zip(test, model.predict([pages[i].html for i in test])):
            predicted[index] = labels
        if progress is not None:
            progress(f"fold {number}/{folds} done ({len(test)} pages held out)")
    result = report(pages, predicted)
    result["protocol"] = f"{folds}-fold cross-validation grouped by registered domain, seed {seed}"
    return result


def evaluate_held_out(model: PaginationTagger, pages: Sequence[LabelledPage]) -> dict:
    result = report(pages, model.predict([page.html for page in pages]))
    result["protocol"] = "held-out: the given model on all the given pages"
    return result
