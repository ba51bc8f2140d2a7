"""The simulated web grown into an internet (infra.simweb.internet) and domain discovery's evaluation on it
(models.expansion.simulated)."""

from collections import Counter
from datetime import UTC, datetime

from infra.simweb.generator import generate_web
from infra.simweb.internet import ORGANISATIONS, PUBLISHING
from models.expansion.simulated import METHODS, SimulatedInternet, evaluate_simweb
from models.web.links import extract_anchors
from schemas.sites import site_of

START = datetime(2026, 1, 5, 8, tzinfo=UTC)


def test_the_internet_is_organisations_of_types_only_some_publishing_and_the_sites_own_pages_unchanged():
    web = generate_web(200, 7, None, START, internet=True)
    assert web == generate_web(200, 7, None, START, internet=True)
    kinds = Counter(site.organisation for site in web)
    assert set(kinds) == set(ORGANISATIONS)
    assert all(not site.sources for site in web if site.organisation not in PUBLISHING)
    assert sum(bool(site.sources) for site in web if site.organisation in PUBLISHING) > 0.7 * sum(
        kinds[kind] for kind in PUBLISHING)
    # A site's own pages are drawn as in the plain web (a publishing organisation keeps its source pages).
    plain = generate_web(200, 7, None, START)
    for grown, site in zip(web, plain, strict=True):
        assert (grown.lang, grown.template, grown.products) == (site.lang, site.template, site.products)
        if grown.organisation in PUBLISHING:
            assert grown.sources == site.sources
    assert all(not site.links and not site.organisation for site in plain)


def test_sites_link_mostly_within_their_type_spam_links_everywhere_and_a_few_sites_are_hubs():
    web = generate_web(300, 7, None, START, internet=True)
    honest = [site for site in web if site.organisation in PUBLISHING]
    same = [web[target].organisation == site.organisation for site in honest for target in site.links]
    assert 0.5 < sum(same) / len(same) < 0.9
    spam = [site for site in web if site.organisation == "spam"]
    assert all(len(site.links) >= 15 for site in spam)
    assert all(other.index in site.links for site in spam for other in spam if other is not site)
    # Honest links (spam's left out) gather on a few hubs: the most linked sites have several times the median.
    in_degree = sorted(Counter(target for site in web if site.organisation != "spam" for target in site.links).values())
    assert in_degree[-1] >= 4 * in_degree[len(in_degree) // 2]


def test_an_organisation_s_homepage_names_its_type_and_links_its_partners_and_their_source_pages():
    internet = SimulatedInternet(120, 7)
    site = next(site for site in internet.sites
                if site.spec.organisation == "museum" and any(internet.sites[t].spec.sources for t in site.spec.links))
    home = internet.fetch(site.origin + "/")
    assert "Museum" in home or "美術館" in home or "博物" in home or "Museo" in home
    targets = {site_of(anchor.url) for anchor in extract_anchors(home, site.origin + "/")} - {site_of(site.origin + "/")}
    assert targets == {site_of(internet.sites[t].origin + "/") for t in site.spec.links}
    linked_sources = {anchor.url for anchor in extract_anchors(home, site.origin + "/")
                      if any(anchor.url.endswith(s.path) and anchor.url != internet.sites[t].origin + "/"
                             for t in site.spec.links for s in internet.sites[t].spec.sources)}
    assert linked_sources  # "their events": a partner's source page, one click away


def test_the_simweb_evaluation_runs_every_method_on_the_same_budget_from_the_same_first_index():
    result = evaluate_simweb(90, 7, samples=3, budget=60)
    assert set(result["operators"]) == set(METHODS)
    assert result["indexed_sites"] == 30 and result["draws"]
    bfs, forward = result["operators"]["bfs"], result["operators"]["forward"]
    assert bfs["pages"] == 60  # a breadth-first crawl always spends its budget
    # Only the forward crawl and BFS reach sites past the first crawl's: they find sites the others cannot.
    assert forward["sites"] > result["operators"]["backward"]["sites"]
    for figures in result["operators"].values():
        assert 0 <= figures["harvest_rate"] <= 1 and 0 <= figures["harvest_rate_sites"] <= 1
        assert figures["pages"] <= 60 and figures["relevant_sites"] <= figures["sites"]
        assert all(point["budget"] % 50 == 0 for point in figures["curve"])
