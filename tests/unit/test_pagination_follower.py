"""The pagination follower: NEXT before PAGE, one fetch per URL per list, a page budget, and traps refused."""

from agents.pagination import MAX_URL_CHARS, PaginationFollower, content_digest
from models.web.dom import parse_html
from schemas.pagination import PaginationTags, TaggedLink

SOURCE = "https://www.news.example.org/events/"


def _tags(page_url: str, links: list[tuple[str, str]], digest: str, depth: int = 0) -> PaginationTags:
    return PaginationTags(
        site="example.org", crawl_id="c1", depth=depth, max_depth=0, source_url=SOURCE, page_url=page_url,
        final_url=page_url, model="test", content_digest=digest,
        links=[TaggedLink(url=url, text=text, label=label) for label, url, text in
               [(label, url, url.rsplit("=", 1)[-1]) for label, url in links]],
    )


def _follower(max_pages: int = 10) -> PaginationFollower:
    return PaginationFollower({}, {}, {}, max_pages)


def test_next_comes_first_and_each_url_is_planned_once():
    follower = _follower()
    first = _tags(SOURCE, [("PAGE", SOURCE + "?page=2"), ("PAGE", SOURCE + "?page=3"), ("NEXT", SOURCE + "?page=2")],
                  "a")
    requests, stop = follower.next_requests(first)
    assert [r.url for r in requests] == [SOURCE + "?page=2", SOURCE + "?page=3"]
    assert stop == ""
    assert {r.reason for r in requests} == {"paginate"} and {r.source_url for r in requests} == {SOURCE}
    second = _tags(SOURCE + "?page=2", [("PAGE", SOURCE), ("PAGE", SOURCE + "?page=3"),
                                        ("NEXT", SOURCE + "?page=3")], "b", depth=1)
    assert follower.next_requests(second) == ([], "")


def test_the_page_budget_counts_the_source_page():
    follower = _follower(max_pages=3)
    links = [("PAGE", f"{SOURCE}?page={n}") for n in range(2, 9)]
    requests, stop = follower.next_requests(_tags(SOURCE, links, "a"))
    assert [r.url for r in requests] == [SOURCE + "?page=2", SOURCE + "?page=3"]
    assert stop == "page_budget"


def test_a_page_repeating_earlier_content_is_a_trap():
    follower = _follower()
    follower.next_requests(_tags(SOURCE, [("NEXT", SOURCE + "?page=2")], "same"))
    requests, stop = follower.next_requests(_tags(SOURCE + "?page=2", [("NEXT", SOURCE + "?page=3")], "same", 1))
    assert requests == [] and stop == "repeated_content"


def test_other_sites_empty_and_endless_urls_are_not_followed():
    follower = _follower()
    links = [("NEXT", "https://elsewhere.example/?page=2"), ("PAGE", ""),
             ("PAGE", SOURCE + "?p=" + "9" * MAX_URL_CHARS)]
    requests, stop = follower.next_requests(_tags(SOURCE, links, "a"))
    assert requests == [] and stop == "other_site"


def test_a_pager_link_to_the_homepage_or_above_the_list_is_never_fetched_as_its_page():
    follower = _follower()
    links = [("PAGE", "https://www.news.example.org/"), ("PAGE", "https://www.news.example.org/index.html"),
             ("NEXT", SOURCE + "?page=2")]
    requests, stop = follower.next_requests(_tags(SOURCE, links, "a"))
    assert [r.url for r in requests] == [SOURCE + "?page=2"]
    assert stop == "above_the_list"


def test_content_digest_ignores_the_pagination_labels():
    page = "<html><body><ul><li>Concert</li><li>Lecture</li></ul><a href='?page={n}'>{n}</a></body></html>"
    one, two = parse_html(page.format(n=2)), parse_html(page.format(n=3))
    links_one = [TaggedLink(url="x", text="2", label="PAGE")]
    links_two = [TaggedLink(url="y", text="3", label="PAGE")]
    assert content_digest(one, links_one) == content_digest(two, links_two)
    assert content_digest(one, []) != content_digest(two, [])
    assert content_digest(None, []) == ""


def test_a_lists_further_pages_carry_the_crawls_end():
    tags = _tags(SOURCE, [("NEXT", SOURCE + "?page=2")], "a").model_copy(update={"stop_at_ms": 1_800_000_000_000})
    requests, _ = _follower().next_requests(tags)
    assert [r.stop_at_ms for r in requests] == [1_800_000_000_000]
