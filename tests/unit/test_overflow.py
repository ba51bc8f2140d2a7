"""Reading past a busy list's first page: when, where to, and how far (agents.overflow)."""

from agents.overflow import next_page_request, next_page_url, overflowed
from agents.pagination import shared_tagger
from agents.records import ChangeDetector, read_records
from schemas.crawl import OVERFLOW_REASON, PageFetched

SOURCE = "https://club.example.org/news/"


def _page(body: str, url: str = SOURCE, depth: int = 0, reason: str = "revisit") -> PageFetched:
    return PageFetched(site="example.org", crawl_id="revisit-40", url=url, final_url=url, reason=reason,
                       status=200, content_type="text/html", body=body, source_url=SOURCE, depth=depth,
                       event_id="fetch-1")


def _listing(numbers: list[int], pager: str) -> str:
    items = "".join(f'<li><h3><a href="/news/{n}/">Council news number {n}</a></h3><p>May {n}, 2026</p></li>'
                    for n in numbers)
    return f"<html><body><nav><a href='/'>Home</a> <a href='/about/'>About</a></nav><main><ul>{items}</ul>" \
           f"{pager}</main></body></html>"


NEXT_PAGER = '<div class="pagination"><span>1</span> <a href="?page=2">2</a> <a href="?page=3">3</a> ' \
             '<a class="next" href="?page=2">Next »</a></div>'


def test_only_a_read_whose_every_item_is_new_overflowed():
    detector = ChangeDetector({}, {})
    first = read_records(_page(_listing([3, 2, 1], NEXT_PAGER), reason="source"))
    seeded = detector.new_items(first.records, SOURCE, "crawl-1")
    assert not overflowed(first.records, seeded)  # a first read seeds: nothing is new
    busy = read_records(_page(_listing([6, 5, 4], NEXT_PAGER)))
    assert overflowed(busy.records, detector.new_items(busy.records, SOURCE, "revisit-40"))
    calm = read_records(_page(_listing([7, 6, 5], NEXT_PAGER)))
    assert not overflowed(calm.records, detector.new_items(calm.records, SOURCE, "revisit-41"))
    assert not overflowed([], [])


def test_the_next_page_is_the_tagged_next_link_within_the_site():
    tagger = shared_tagger(None)
    assert shared_tagger(None) is tagger  # one model per worker
    page = _page(_listing([6, 5, 4], NEXT_PAGER))
    assert next_page_url(page, read_records(page).records, None) == SOURCE + "?page=2"
    bare = _page(_listing([6, 5, 4], ""))
    assert next_page_url(bare, read_records(bare).records, None) is None


def test_a_load_more_link_the_tagger_leaves_untagged_is_found_by_its_url():
    load_more = '<div class="more"><a class="load-more button" href="?offset=3">Mehr laden</a></div>'
    page = _page(_listing([6, 5, 4], load_more))
    assert next_page_url(page, read_records(page).records, None) == SOURCE + "?offset=3"
    second = _page(_listing([3, 2, 1], load_more.replace("offset=3", "offset=6")), SOURCE + "?offset=3", depth=1,
                   reason=OVERFLOW_REASON)
    assert next_page_url(second, read_records(second).records, None) == SOURCE + "?offset=6"
    elsewhere = _page(_listing([6, 5, 4], '<a href="https://other.example.net/news/?offset=3">More</a>'))
    assert next_page_url(elsewhere, read_records(elsewhere).records, None) is None  # not the site's


def test_the_next_page_is_fetched_for_the_source_until_the_lists_page_budget():
    page = _page(_listing([6, 5, 4], NEXT_PAGER)).model_copy(update={"tick_at": None})
    request = next_page_request(page, SOURCE + "?page=2", max_pages=3)
    assert (request.url, request.reason, request.source_url, request.depth) == (
        SOURCE + "?page=2", OVERFLOW_REASON, SOURCE, 1)
    assert request.max_depth == request.depth  # the page is read; its links are not crawled
    assert request.event_id == next_page_request(page, SOURCE + "?page=2", max_pages=3).event_id  # redelivered
    second = _page("", SOURCE + "?page=2", depth=1, reason=OVERFLOW_REASON)
    assert next_page_request(second, SOURCE + "?page=3", max_pages=3).depth == 2
    third = _page("", SOURCE + "?page=3", depth=2, reason=OVERFLOW_REASON)
    assert next_page_request(third, SOURCE + "?page=4", max_pages=3) is None
