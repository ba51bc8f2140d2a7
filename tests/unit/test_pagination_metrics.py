import pytest

from models.pagination.metrics import page_f1, score


def test_page_f1_rules_for_empty_labels():
    assert page_f1(["OTHER", "OTHER"], ["OTHER", "OTHER"], "NEXT") == 1.0  # neither: 1
    assert page_f1(["NEXT", "OTHER"], ["OTHER", "OTHER"], "NEXT") == 0.0  # only gold: 0
    assert page_f1(["OTHER", "OTHER"], ["NEXT", "OTHER"], "NEXT") == 0.0  # only predicted: 0
    assert page_f1(["PAGE", "PAGE", "OTHER"], ["PAGE", "OTHER", "PAGE"], "PAGE") == pytest.approx(0.5)


def test_micro_pools_nodes_and_macro_averages_pages():
    gold = [["PAGE", "PAGE", "NEXT", "OTHER"], ["OTHER", "OTHER"]]
    predicted = [["PAGE", "OTHER", "NEXT", "NEXT"], ["OTHER", "OTHER"]]
    result = score(gold, predicted)
    assert result["pages"] == 2 and result["nodes"] == 6
    assert result["micro"]["PAGE"] == {"p": 1.0, "r": 0.5, "f1": pytest.approx(0.6667, abs=1e-4)}
    assert result["micro"]["NEXT"] == {"p": 0.5, "r": 1.0, "f1": pytest.approx(0.6667, abs=1e-4)}
    # Page 2 has no pagination and none predicted: it scores 1 for both labels.
    assert result["macro"]["PAGE"]["f1"] == pytest.approx((0.6667 + 1) / 2, abs=1e-4)
    only = score(gold, predicted, only_paginated=True)
    assert only["pages"] == 1 and only["macro"]["PAGE"]["f1"] == pytest.approx(0.6667, abs=1e-4)
    assert result["micro"]["avg_f1"] == pytest.approx(0.6667, abs=1e-4)


def test_lengths_must_match():
    with pytest.raises(ValueError):
        score([["PAGE"]], [])
