"""Pagination tagging scores as DESIGN.md defines them.

Micro: precision, recall and F1 per label over every clickable node of every
page. Macro: per page, the F1 of a label (1 when the page has neither a gold
nor a predicted node of that label, 0 when only one of the two is empty),
averaged over pages. `avg_f1` is the mean over PAGE and NEXT.
"""

from __future__ import annotations

from collections.abc import Sequence

SCORED = ("PAGE", "NEXT")


def _prf(true_positives: int, predicted: int, gold: int) -> tuple[float, float, float]:
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def page_f1(gold: Sequence[str], predicted: Sequence[str], label: str) -> float:
    gold_count = sum(1 for g in gold if g == label)
    predicted_count = sum(1 for p in predicted if p == label)
    if gold_count == 0 and predicted_count == 0:
        return 1.0
    hits = sum(1 for g, p in zip(gold, predicted) if g == p == label)
    return _prf(hits, predicted_count, gold_count)[2]


def score(gold_pages: Sequence[Sequence[str]], predicted_pages: Sequence[Sequence[str]],
          only_paginated: bool = False) -> dict:
    """{'micro': {PAGE: {p, r, f1}, NEXT: …, avg_f1}, 'macro': {PAGE: {f1}, NEXT: …, avg_f1}, 'pages', 'nodes'}.

    `only_paginated` keeps the pages whose gold has a PAGE or NEXT node (pages without
    pagination score 1 when nothing is predicted and inflate the macro figure).
    """
    pairs = [(g, p) for g, p in zip(gold_pages, predicted_pages, strict=True)
             if not only_paginated or any(label in SCORED for label in g)]
    micro: dict = {}
    macro: dict = {}
    for label in SCORED:
        hits = sum(1 for g, p in pairs for a, b in zip(g, p) if a == b == label)
        predicted = sum(1 for _, p in pairs for b in p if b == label)
        gold = sum(1 for g, _ in pairs for a in g if a == label)
        precision, recall, f1 = _prf(hits, predicted, gold)
        micro[label] = {"p": round(precision, 4), "r": round(recall, 4), "f1": round(f1, 4)}
        per_page = [page_f1(g, p, label) for g, p in pairs]
        macro[label] = {"f1": round(sum(per_page) / len(per_page), 4) if per_page else 0.0}
    micro["avg_f1"] = round(sum(micro[label]["f1"] for label in SCORED) / len(SCORED), 4)
    macro["avg_f1"] = round(sum(macro[label]["f1"] for label in SCORED) / len(SCORED), 4)
    return {"micro": micro, "macro": macro, "pages": len(pairs), "nodes": sum(len(g) for g, _ in pairs)}
