"""Pages as witnesses: a site's other pages tell its template (menus, sidebars) from a list page's data."""

import numpy as np

from agents.records import SiteWitnesses
from models.records.candidates import FEATURES, candidate_features, page_candidates
from models.records.ranker import default_ranker
from models.records.witnesses import merged, page_fingerprint, structure_shown, TemplateReader, witnesses_by_site
from models.web.dom import parse_html
from schemas.crawl import PageFetched

BASE = "https://parish.example.org/"
SIDEBAR = "".join(f'<div class="side"><a href="/{n}">Parish office opening hours and contact number {n}</a>'
                  f"<p>Our office in the old school building, room {n}</p></div>" for n in range(12))


def _page(data: str) -> str:
    return f"<html><body><div class='content'>{data}</div><div class='col'>{SIDEBAR}</div></body></html>"


def _news(names: list[str]) -> str:
    return "".join(f'<div class="post"><a href="/news/{name}">{name.title()} news</a><p>2024-05-0{i + 1}</p></div>'
                   for i, name in enumerate(names))


LIST_PAGE = _page(_news(["harvest", "choir", "fair", "lent"]))
OTHER_PAGE = _page("<h1>About us</h1><p>Since 1850, a parish of the valley.</p>")


def _sidebar_shares(witness):
    root = parse_html(LIST_PAGE)
    candidates = page_candidates(root, BASE)
    sidebar = next(c for c in candidates if c.records[0][0].get("class") == "side")
    news = next(c for c in candidates if c.records[0][0].get("class") == "post")
    return TemplateReader(witness).shares(sidebar.records), TemplateReader(witness).shares(news.records)


def test_text_the_other_pages_show_is_template_and_text_they_do_not_is_data():
    witness = page_fingerprint(parse_html(OTHER_PAGE))
    sidebar, news = _sidebar_shares(witness)
    assert sidebar == (1.0, 1.0)
    assert news == (0.0, 0.0)
    # Without witnesses nothing is known: zeros, and the ranker sees that none were given.
    assert _sidebar_shares(frozenset()) == ((0.0, 0.0), (0.0, 0.0))


def test_witness_features_reach_the_ranker():
    root = parse_html(LIST_PAGE)
    candidates = page_candidates(root, BASE)
    witness = page_fingerprint(parse_html(OTHER_PAGE))
    alone, told = candidate_features(candidates, root, BASE), candidate_features(candidates, root, BASE, witness)
    column = FEATURES.index("has_witnesses")
    assert not alone[:, column].any() and told[:, column].all()
    assert np.array_equal(alone[:, :FEATURES.index('template_letter_share')], told[:, :FEATURES.index('template_letter_share')])


def test_the_shipped_ranker_counts_a_sidebar_shown_to_be_template_against_it():
    # What the witnesses do to the shipped ranker's scores, not its choice: the sidebar's twelve entries outweigh
    # four posts, and whether the witnesses turn the choice turns with each retraining (a known weakness, issue 17:
    # Estuka's query pages often repeat their results, which blurs the witnesses' signal in training; the ranker
    # of 2026-12-01 scores the sidebar 2.61 → 1.44 and the posts 0.80 → 0.88, still choosing the sidebar).
    witness = merged([page_fingerprint(parse_html(OTHER_PAGE)),
                      page_fingerprint(parse_html(_page(_news(["winter", "advent"]))))])
    root = parse_html(LIST_PAGE)
    candidates = page_candidates(root, BASE)
    sidebar = next(i for i, c in enumerate(candidates) if c.records[0][0].get("class") == "side")
    news = next(i for i, c in enumerate(candidates) if c.records[0][0].get("class") == "post")
    alone = default_ranker().scores(candidate_features(candidates, root, BASE))
    told = default_ranker().scores(candidate_features(candidates, root, BASE, witness))
    assert told[sidebar] < alone[sidebar]
    assert told[sidebar] - told[news] < alone[sidebar] - alone[news]


def test_invisible_text_is_not_in_a_fingerprint_and_case_and_spacing_do_not_matter():
    shown = page_fingerprint(parse_html("<p>Parish  News</p><script>var x = 'Secret'</script>"))
    assert shown == page_fingerprint(parse_html("<p>parish news</p>"))
    assert shown != page_fingerprint(parse_html("<div>parish news</div>"))  # a p is not a div
    assert page_fingerprint(None) == frozenset()


def test_a_list_whose_structure_the_other_pages_show_with_other_text_is_data():
    root = parse_html(LIST_PAGE)
    news = next(c for c in page_candidates(root, BASE) if c.records[0][0].get("class") == "post")
    assert structure_shown(news.region, page_fingerprint(parse_html(_page(_news(["winter", "advent"])))))
    assert not structure_shown(news.region, page_fingerprint(parse_html(OTHER_PAGE)))


def test_each_page_is_witnessed_by_other_pages_of_its_site_only():
    prints = [frozenset({1}), frozenset({2}), frozenset({3}), frozenset({4}), frozenset({5})]
    sites = ["a", "a", "b", "a", "a"]
    assert witnesses_by_site(sites, prints, most=2) == [
        frozenset({2, 4}), frozenset({1, 4}), frozenset(), frozenset({1, 2}), frozenset({1, 2})]


def _fetched(url: str, reason: str, body: str = OTHER_PAGE, site: str = "parish.example.org") -> PageFetched:
    return PageFetched(event_id=f"e-{url}-{reason}", site=site, crawl_id="c1", url=url, final_url=url, reason=reason,
                       status=200, content_type="text/html", body=body)


def test_the_stream_keeps_a_few_crawl_pages_per_site_and_not_the_homepage_or_the_listing_itself():
    table: dict = {}
    witnesses = SiteWitnesses(table)
    home, listing = _fetched(BASE, "seed"), _fetched(BASE + "news/", "discover", LIST_PAGE)
    assert not witnesses.wants(home)
    for page in [listing] + [_fetched(f"{BASE}p{n}/", "bfs") for n in range(5)]:
        if witnesses.wants(page):
            witnesses.add(page, witnesses.fingerprint(page))
    assert len(table["parish.example.org"]) == 3
    # Read as the source page, the listing is not its own witness: the other two pages are.
    source = _fetched(BASE + "news/", "source", LIST_PAGE)
    assert witnesses.of(source) == page_fingerprint(parse_html(OTHER_PAGE))
    assert witnesses.of(_fetched(BASE + "x/", "source", site="other.example")) == frozenset()
