"""Domain discovery's local index (models.expansion.index) and rankers (models.expansion.ranking)."""

import numpy as np
import pytest

from models.expansion.index import PageIndex, page_text
from models.expansion.ranking import PAGERANK_WEIGHT, TEXT_RANKERS, positions, rank_candidates


def html(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title><script>var x = 'hidden';</script></head><body>{body}</body></html>"


def test_the_index_searches_words_finds_related_pages_and_keeps_the_link_graph():
    index = PageIndex()
    index.add("http://a.org/events/", html("Events", 'Concerts and workshops <a href="/events/1">one</a> '
                                                    '<a href="http://b.org/">partner</a>'))
    index.add("http://a.org/events/1", html("Concert", "A concert of chamber music, workshops after"))
    index.add("http://b.org/", html("Shop", "Shoes and bags <a href='http://a.org/events/'>their events</a>"))
    assert len(index) == 3
    assert index.search(["concerts"]) == ["http://a.org/events/"]
    assert set(index.search(["workshops", "shoes"])) == {"http://a.org/events/", "http://a.org/events/1",
                                                         "http://b.org/"}
    assert index.search(["hidden"]) == []  # scripts are not text
    assert "http://a.org/events/1" in index.related("http://a.org/events/")
    assert "http://a.org/events/" not in index.related("http://a.org/events/")
    assert set(index.out_links("http://a.org/events/")) == {"http://a.org/events/1", "http://b.org/"}
    assert index.in_links("http://a.org/events/") == ["http://b.org/"]
    assert set(index.edges()) == {("http://a.org/events/", "http://a.org/events/1"),
                                  ("http://a.org/events/", "http://b.org/"), ("http://b.org/", "http://a.org/events/")}
    # Indexed again, a page's text and links are replaced.
    index.add("http://b.org/", html("Shop", "Only shoes"))
    assert index.in_links("http://a.org/events/") == [] and index.search(["bags"]) == []


def test_a_page_s_words_carry_its_path_and_a_token_per_date_and_time():
    words = page_text("http://a.org/agenda/", html("Agenda", "Talk 2026-11-25 19:30; fair 3.12.2026")).words()
    assert words.startswith("urlagenda Agenda") and words.count("dateword") == 2 and words.count("timeword") == 1


def test_positions_are_one_based_by_descending_score_with_ties_sharing():
    assert positions(np.array([0.2, 0.9, 0.2, 0.5])).tolist() == [3.5, 1.0, 3.5, 2.0]


def test_pages_like_the_samples_rank_first_and_combined_f_weighs_pagerank_by_alpha():
    samples = [f"urlevents events calendar concert {n} dateword dateword timeword" for n in range(4)]
    like = ["urlevents upcoming events concert calendar dateword dateword dateword timeword",
            "urlagenda events calendar workshop dateword dateword"]
    unlike = [f"shop shoes bags price {n} cart checkout" for n in range(6)]
    urls = [f"http://x.org/{n}" for n in range(8)]
    edges = [(url, urls[7]) for url in urls[:7]]  # every page links to the last
    ranked = rank_candidates(samples, like + unlike, urls, edges)
    for name in TEXT_RANKERS:
        assert set(np.argsort(ranked[name], kind="stable")[:2]) == {0, 1}, name
    assert ranked["pagerank"][7] == 1.0
    mean_text = np.mean([ranked[name] for name in TEXT_RANKERS], axis=0)
    combined = (1 - PAGERANK_WEIGHT) * mean_text + PAGERANK_WEIGHT * ranked["pagerank"]
    assert ranked["combined"].tolist() == pytest.approx(positions(-combined).tolist())
    assert set(np.argsort(ranked["combined"], kind="stable")[:2]) == {0, 1}
