"""Domain discovery's local index (models.expansion.index) and rankers (models.expansion.ranking)."""

import numpy as np
import pytest

from models.expansion.index import PageIndex, page_text
from models.expansion.ranking import (
    MIN_SHARED_WORDS,
    PAGERANK_WEIGHT,
    TEXT_RANKERS,
    domain_vocabulary,
    positions,
    rank_candidates,
)


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
    ranked = rank_candidates(samples, [f"s{n}.org" for n in range(4)], like + unlike, urls, edges)
    for name in TEXT_RANKERS:
        assert set(np.argsort(ranked[name], kind="stable")[:2]) == {0, 1}, name
    assert ranked["pagerank"][7] == 1.0
    mean_text = np.mean([ranked[name] for name in TEXT_RANKERS], axis=0)
    combined = (1 - PAGERANK_WEIGHT) * mean_text + PAGERANK_WEIGHT * ranked["pagerank"]
    assert ranked["combined"].tolist() == pytest.approx(positions(-combined).tolist())
    assert set(np.argsort(ranked["combined"], kind="stable")[:2]) == {0, 1}


def test_the_domain_s_words_are_those_several_sample_sites_show():
    domain = " ".join(f"word{chr(97 + n)}" for n in range(MIN_SHARED_WORDS))
    samples = [f"Riverside Museum {domain}", "Riverside Museum shop", f"Hilltop Council {domain}",
               f"Lakeside Club {domain} dateword", f"Harbour Trust {domain} dateword"]
    sites = ["riverside.org", "riverside.org", "hilltop.gov", "lakeside.club", "harbour.org"]
    # Four sites: a word counts once two of them show it; a site's own name, however often, does not.
    assert domain_vocabulary(samples, sites) == sorted([*domain.split(), "dateword"])
    # One site, or sites that share fewer words than a language has: every word is read.
    assert domain_vocabulary(samples[:2], sites[:2]) is None
    assert domain_vocabulary(["alpha meetings", "beta meetings"], ["a.org", "b.org"]) is None


def test_the_sample_sites_own_words_do_not_lift_their_other_pages_and_a_page_without_the_domain_s_words_is_last():
    domain = " ".join(f"word{chr(97 + n)}" for n in range(MIN_SHARED_WORDS))
    samples = [f"{name} {name} home contact meetings agenda minutes dateword dateword {domain}"
               for name in ("riverside", "hilltop", "lakeside", "harbour")]
    sample_sites = ["riverside.org", "hilltop.gov", "lakeside.club", "harbour.org"]
    other_list = f"meetings agenda minutes dateword dateword dateword {domain}"
    same_site_home = "riverside riverside home contact shop"
    unrelated = "shoes bags cart checkout"
    urls = ["http://x.org/", "http://riverside.org/", "http://y.org/"]
    ranked = rank_candidates(samples, sample_sites, [other_list, same_site_home, unrelated], urls, [])
    for name in TEXT_RANKERS:
        assert ranked[name][0] == 1.0 and ranked[name][2] == 3.0, name


def test_the_sample_sites_pages_bring_every_word_of_theirs():
    domain = " ".join(f"word{chr(97 + n)}" for n in range(MIN_SHARED_WORDS))
    samples = [f"{name} events dateword {domain}" for name in ("riverside", "hilltop", "lakeside", "harbour")]
    sample_sites = ["riverside.org", "hilltop.gov", "lakeside.club", "harbour.org"]
    # A museum's homepage in another language than the samples: none of the domain's words.
    candidates = ["museo colecciones exposiciones", "zapatos bolsos carrito", f"events {domain}"]
    urls = ["http://m.org/", "http://s.org/", "http://e.org/"]
    alone = rank_candidates(samples, sample_sites, candidates, urls, [])
    homepage = "riverside museum collections exhibitions museo colecciones exposiciones"
    with_home = rank_candidates(samples, sample_sites, candidates, urls, [], site_pages=[homepage])
    for name in TEXT_RANKERS:
        assert alone[name].tolist() == [2.5, 2.5, 1.0], name  # both like the samples in nothing: last, tied
        assert with_home[name][0] < with_home[name][1], name  # the homepage's own words read


def test_ucb1_tries_every_arm_then_prefers_the_paying_one():
    from models.expansion.rounds import UCB1

    bandit = UCB1(["a", "b", "c"])
    seen = []
    for _ in range(3):
        arm = bandit.choose()
        seen.append(arm)
        bandit.update(arm, 1.0 if arm == "b" else 0.0)
    assert sorted(seen) == ["a", "b", "c"]
    assert [bandit.choose() for _ in range(1)] == ["b"]
    assert bandit.choose(["a", "c"]) in {"a", "c"}


def test_eq9_pays_new_pages_by_how_high_they_rank_and_nothing_for_pages_found_before():
    from models.expansion.rounds import eq9_reward

    position = {"x": 0, "y": 1, "z": 3}
    assert eq9_reward(["x", "z"], {"x", "z"}, position, 4) == pytest.approx(((1 - 0) + (1 - 3 / 4)) / 2)
    assert eq9_reward(["x", "y"], {"y"}, position, 4) == pytest.approx((1 - 1 / 4) / 2)
    assert eq9_reward([], set(), position, 4) == 0.0


def expansion_index() -> PageIndex:
    events = "Upcoming events calendar: concert 2026-12-01 19:30, workshop 2026-12-08 18:00, talk 2026-12-15 17:00"
    index = PageIndex()
    index.add("http://a.org/events/", html("Events", events + ' <a href="http://c.org/events/">friends</a>'))
    index.add("http://b.org/events/", html("Events", events))
    index.add("http://c.org/events/", html("Events", events + ' <a href="http://e.org/">shop we like</a>'))
    index.add("http://d.org/agenda/", html("Agenda", events + ' <a href="http://b.org/events/">partner</a>'))
    index.add("http://e.org/", html("Shop", "Shoes and bags, prices, cart, checkout"))
    return index


def test_expansion_rounds_find_the_domain_s_other_sites_and_stop_when_nothing_is_new():
    from models.expansion.rounds import Expansion

    expansion = Expansion(expansion_index(), ["http://a.org/events/", "http://b.org/events/"], top_k=3)
    rounds = expansion.run(budget=100)
    assert rounds and {r.operator for r in rounds} <= {"keyword", "related", "forward", "backward"}
    assert expansion.end == "no operator finds anything new"
    assert set(expansion.found) == {"http://c.org/events/", "http://d.org/agenda/", "http://e.org/"}
    # The shop is found (linked from c.org) but ranked below the domain's pages.
    homepages = expansion.homepages()
    assert homepages[-1] == "http://e.org/" and set(homepages[:2]) == {"http://c.org/", "http://d.org/"}
    assert all(r.reward == 0.0 for r in rounds if not r.new)


def test_the_forward_crawl_fetches_out_links_the_index_lacks_and_each_operator_starts_from_new_seeds():
    from models.expansion.rounds import Expansion

    index = PageIndex()
    index.add("http://a.org/events/", html("Events", "Concerts <a href='http://f.org/events/'>friends</a>"))
    asked: list[list[str]] = []

    def fetch(urls: list[str]) -> dict[str, str]:
        asked.append(urls)
        return {url: html("Events", "Concerts and workshops <a href='http://g.org/'>g</a>")
                for url in urls if url.startswith("http://f.org/")}

    expansion = Expansion(index, ["http://a.org/events/"], chooser=lambda number, allowed: "forward", fetch=fetch)
    first = expansion.step(1)
    # f.org was not indexed: fetched, indexed with its own links, and found.
    assert asked == [["http://f.org/events/"]] and first.new == ["http://f.org/events/"] and expansion.fetched == 1
    assert index.out_links("http://f.org/events/") == ["http://g.org/"]
    # The next forward round starts from f.org (the sample was started from): g.org is asked for, cannot be read,
    # and is not found.
    second = expansion.step(2)
    assert first.seeds == ["http://a.org/events/"] and second.seeds == ["http://f.org/events/"]
    assert asked[-1] == ["http://g.org/"] and second.new == [] and "forward" in expansion.exhausted


def test_keyword_search_asks_the_web_for_its_next_results_page_and_gives_it_up_once_with_the_reason():
    from infra.searxng import SearchUnavailable
    from models.expansion.rounds import Expansion

    index = PageIndex()
    index.add("http://a.org/events/", html("Events", "Concerts and workshops"))
    asked: list[tuple[list[str], int]] = []

    def web_search(words: list[str], page: int) -> list[str]:
        asked.append((words, page))
        if page == 2:
            raise SearchUnavailable("SearXNG at http://127.0.0.1:9/ is unreachable: refused")
        return ["http://w.org/events/"]

    def fetch(urls: list[str]) -> dict[str, str]:
        return {url: html("Events", "Concerts and workshops at w") for url in urls}

    expansion = Expansion(index, ["http://a.org/events/"], chooser=lambda number, allowed: "keyword", fetch=fetch,
                          web_search=web_search)
    first = expansion.step(1)
    assert first.new == ["http://w.org/events/"] and expansion.web_searches == 1 and expansion.fetched == 1
    assert "concerts" in asked[0][0]  # the samples' words
    expansion.step(2)
    expansion.step(3)
    # Asked for page 2, failed: one note, never asked again.
    assert [page for _, page in asked] == [1, 2]
    assert expansion.notes == ["web search given up: SearXNG at http://127.0.0.1:9/ is unreachable: refused"]
