"""The demo's figures against the simulated web's truth."""

from streams.demo import evaluate_pagination

TRUTH = {"site-0": {"source_pages": [
    {"url": "http://a/news/", "pages": ["http://a/news/", "http://a/news/?page=2", "http://a/news/?page=3"]},
    {"url": "http://a/events/", "pages": ["http://a/events/"]},
    {"url": "http://a/blog/", "pages": [f"http://a/blog/page/{n}/" for n in range(1, 16)]},
]}}


def test_pagination_recall_counts_only_what_the_budget_allows_and_precision_the_list_pages():
    fetched = {"http://a/news/", "http://a/news/?page=2", "http://a/news/?size=50", "http://a/events/",
               *[f"http://a/blog/page/{n}/" for n in range(1, 11)]}
    figures = evaluate_pagination(TRUTH, ["http://a/news/", "http://a/events/", "http://a/blog/"], fetched, 10)
    assert figures["list_pages_reachable"] == 3 + 1 + 10
    assert figures["list_pages_fetched"] == 2 + 1 + 10
    assert figures["pagination_recall"] == round(13 / 14, 4)
    assert figures["pagination_precision"] == round(13 / 14, 4)


def test_no_source_read_gives_no_figures():
    figures = evaluate_pagination(TRUTH, [], set(), 10)
    assert figures["pagination_recall"] is None and figures["pagination_precision"] is None
