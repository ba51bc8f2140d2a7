"""Reading past a busy list's first page: when, where to, and how far (agents.overflow)."""

from datetime import UTC, datetime

import pytest

from agents.overflow import KnownNextPages, next_page_request, next_page_url, overflowed, read_on_budget
from agents.pagination import above_the_list
from agents.pagination import shared_tagger, tag_pages
from agents.records import ChangeDetector, read_records
from infra.simweb.generator import generate_site
from infra.simweb.server import SIM_START, FaultBoard, SimClock, SimSite
from schemas.crawl import OVERFLOW_REASON, PageFetched

SOURCE = "https://club.example.org/news/"


def _page(body: str, url: str = SOURCE, depth: int = 0, reason: str = "revisit", at: int = 0) -> PageFetched:
    """A fetch of the list; `at`: its fetch time in minutes past an hour (0: now)."""
    return PageFetched(site="example.org", crawl_id="revisit-40", url=url, final_url=url, reason=reason,
                       status=200, content_type="text/html", body=body, source_url=SOURCE, depth=depth,
                       event_id="fetch-1", fetched_at_ms=1_780_000_000_000 + at * 60_000 if at else 0)


def _listing(numbers: list[int], pager: str) -> str:
    items = "".join(f'<li><h3><a href="/news/{n}/">Council news number {n}</a></h3><p>May {n}, 2026</p></li>'
                    for n in numbers)
    return f"<html><body><nav><a href='/'>Home</a> <a href='/about/'>About</a></nav><main><ul>{items}</ul>" \
           f"{pager}</main></body></html>"


NEXT_PAGER = '<div class="pagination"><span>1</span> <a href="?page=2">2</a> <a href="?page=3">3</a> ' \
             '<a class="next" href="?page=2">Next »</a></div>'


def _read(detector: ChangeDetector, page: PageFetched, crawl_id: str) -> bool:
    """Whether this read of the list overflowed."""
    records = read_records(page).records
    next_page = page.reason == OVERFLOW_REASON
    new = detector.new_items(records, SOURCE, crawl_id, overflow=next_page)
    return overflowed(records, new, detector.reached_known(records, SOURCE), next_page)


def test_only_a_read_whose_every_item_is_new_overflowed():
    detector = ChangeDetector({}, {})
    assert not _read(detector, _page(_listing([3, 2, 1], NEXT_PAGER), reason="source", at=1), "crawl-1")  # seeds
    assert _read(detector, _page(_listing([6, 5, 4], NEXT_PAGER), at=2), "revisit-40")
    assert not _read(detector, _page(_listing([7, 6, 5], NEXT_PAGER), at=3), "revisit-41")
    assert not overflowed([], [], False, True)


def test_a_next_page_that_opens_with_the_first_pages_own_items_is_read_on():
    # The list moved on between the fetch of its first page and of its next one: the next page opens with the
    # items the first page just showed, and what follows them is new too — not older items.
    detector = ChangeDetector({}, {})
    _read(detector, _page(_listing([3, 2, 1], NEXT_PAGER), reason="source", at=1), "crawl-1")
    assert _read(detector, _page(_listing([12, 11, 10], NEXT_PAGER), at=2), "revisit-40")
    records = read_records(_page(_listing([10, 9, 8], NEXT_PAGER), SOURCE + "?page=2", depth=1,
                                 reason=OVERFLOW_REASON, at=3)).records
    new = detector.new_items(records, SOURCE, "revisit-40", overflow=True)
    assert [item.item_url for item in new] == [f"https://club.example.org/news/{n}/" for n in (9, 8)]
    assert overflowed(records, new, detector.reached_known(records, SOURCE), True)  # none known before: on
    records = read_records(_page(_listing([7, 6, 5, 4, 3], NEXT_PAGER), SOURCE + "?page=3", depth=2,
                                 reason=OVERFLOW_REASON, at=4)).records
    new = detector.new_items(records, SOURCE, "revisit-40", overflow=True)
    assert [item.item_url for item in new] == [f"https://club.example.org/news/{n}/" for n in (7, 6, 5, 4)]
    assert not overflowed(records, new, detector.reached_known(records, SOURCE), True)  # 3 known: the rest older


def test_the_next_page_is_the_tagged_next_link_within_the_site():
    tagger = shared_tagger(None)
    assert shared_tagger(None) is tagger  # one model per worker
    page = _page(_listing([6, 5, 4], NEXT_PAGER))
    assert next_page_url(page, None) == SOURCE + "?page=2"
    assert next_page_url(_page(_listing([6, 5, 4], "")), None) is None


def test_a_page_read_on_again_goes_to_the_next_page_it_led_to_while_it_still_links_it(tmp_path):
    known = KnownNextPages(capacity=2)
    first = _page(_listing([6, 5, 4], NEXT_PAGER))
    assert next_page_url(first, None, known) == SOURCE + "?page=2"  # tagged, and remembered
    no_model = tmp_path / "absent.pt"  # a read that tags would fail on it
    assert next_page_url(_page(_listing([9, 8, 7], NEXT_PAGER)), no_model, known) == SOURCE + "?page=2"
    # The list's pager moved to a cursor: the page no longer links the remembered page, so it is tagged again.
    cursor = _page(_listing([9, 8, 7], '<a class="next" href="?before=7">Next »</a>'))
    with pytest.raises(FileNotFoundError):
        next_page_url(cursor, no_model, known)
    assert next_page_url(cursor, None, known) == SOURCE + "?before=7"
    for n in (1, 2):  # the oldest pages are forgotten beyond the capacity
        known.remember(f"{SOURCE}?x={n}", f"{SOURCE}?x={n + 1}")
    assert known.get(SOURCE) is None and known.get(f"{SOURCE}?x=2") == f"{SOURCE}?x=3"


def test_a_load_more_link_the_tagger_leaves_untagged_is_found_by_its_url():
    load_more = '<div class="more"><a class="load-more button" href="?offset=3">Mehr laden</a></div>'
    page = _page(_listing([6, 5, 4], load_more))
    assert next_page_url(page, None) == SOURCE + "?offset=3"
    second = _page(_listing([3, 2, 1], load_more.replace("offset=3", "offset=6")), SOURCE + "?offset=3", depth=1,
                   reason=OVERFLOW_REASON)
    assert next_page_url(second, None) == SOURCE + "?offset=6"
    # The tag stage takes it as the list's NEXT link too, so a first read of the list follows it.
    tags = tag_pages(shared_tagger(None), "default", [page])[0]
    assert [(link.label, link.text, link.url) for link in tags.links] == [("NEXT", "Mehr laden", SOURCE + "?offset=3")]
    elsewhere = _page(_listing([6, 5, 4], '<a href="https://other.example.net/news/?offset=3">More</a>'))
    assert next_page_url(elsewhere, None) is None  # not the site's


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


def test_without_a_mark_of_the_first_pages_read_every_known_item_ends_the_next_page():
    # State from before the detector marked its reads (a rolling upgrade: the first page read by the previous
    # version, its next page by this one): a known item is taken for an older one, as it was.
    detector = ChangeDetector({}, {})
    _read(detector, _page(_listing([3, 2, 1], NEXT_PAGER), reason="source", at=1), "crawl-1")
    _read(detector, _page(_listing([12, 11, 10], NEXT_PAGER), at=2), "revisit-40")
    del detector.known[f"{SOURCE}\x00read"]
    records = read_records(_page(_listing([10, 9, 8], NEXT_PAGER), SOURCE + "?page=2", depth=1,
                                 reason=OVERFLOW_REASON, at=3)).records
    assert detector.new_items(records, SOURCE, "revisit-40", overflow=True) == []
    assert detector.reached_known(records, SOURCE)


def test_a_next_page_of_only_the_revisits_own_items_is_read_on():
    # A burst moved the list on by a whole page between two fetches: the next page shows only what the first
    # page just showed. The items pushed further lie beyond it; a page of items known before ends the reading.
    detector = ChangeDetector({}, {})
    _read(detector, _page(_listing([3, 2, 1], NEXT_PAGER), reason="source", at=1), "crawl-1")
    assert _read(detector, _page(_listing([12, 11, 10], NEXT_PAGER), at=2), "revisit-40")
    shifted = _page(_listing([12, 11, 10], NEXT_PAGER), SOURCE + "?page=2", depth=1, reason=OVERFLOW_REASON, at=3)
    assert _read(detector, shifted, "revisit-40")
    older = _page(_listing([3, 2, 1], NEXT_PAGER), SOURCE + "?page=3", depth=2, reason=OVERFLOW_REASON, at=4)
    assert not _read(detector, older, "revisit-40")
    assert not _read(detector, _page(_listing([12, 11, 10], NEXT_PAGER), at=5), "revisit-41")  # nothing new


def test_a_pager_link_to_the_homepage_or_a_page_above_the_list_is_never_its_next_page():
    listing = "https://club.example.org/events-hub/events/"
    assert above_the_list("https://club.example.org/", listing)  # a "首页" / "Home" link
    assert above_the_list("https://club.example.org/events-hub/", listing)  # the hub the list belongs to
    assert above_the_list("https://club.example.org/events-hub/events", listing)  # the list itself
    assert above_the_list("https://club.example.org/index.php", listing)  # the root's index file
    assert not above_the_list("https://club.example.org/events-hub/events/index2.html", listing)
    assert not above_the_list(listing + "?page=2", listing)
    assert not above_the_list(listing + "page/2/", listing)
    assert not above_the_list("https://club.example.org/?page=2", "https://club.example.org/")
    assert not above_the_list("https://club.example.org/events-hub/events-archive/", listing)
    # A pager whose only other link is the homepage: no next page, where the homepage was read before.
    home_pager = '<div class="pagination"><a href="/">首页</a> <span>1</span> <a href="/">尾页</a></div>'
    assert next_page_url(_page(_listing([6, 5, 4], home_pager)), None) is None


def test_a_load_more_link_beside_a_footer_link_to_the_homepage_leads_on():
    # The 5,000-site soak's 29 items pushed off a Chinese news list of ten (site-1142's /news/): the tagger took
    # its footer's "首页" (the homepage, and the word for "first page") for its pager, so its "加载更多" ("load
    # more") was never read as one and no read went past the first page. Site 417 of seed 1 is such a list.
    spec = generate_site(1, 417, None, SIM_START)
    source = next(source for source in spec.sources if source.pagination == "load_more")
    clock = SimClock(0)
    clock.advance(1.0)
    site = SimSite(spec, clock, FaultBoard())
    url = "http://127.0.0.1:40000" + source.path
    body = site.respond(source.path, {})[1]
    assert '<a href="/">首页</a>' in body and "加载更多" in body
    page = PageFetched(site="127.0.0.1:40000", crawl_id="revisit-1", url=url, final_url=url, reason="revisit",
                       status=200, content_type="text/html", body=body, source_url=url)
    assert next_page_url(page, None, KnownNextPages()) == f"{url}?offset={source.page_size}"


def _numbered_pager(current: int, last: int) -> str:
    numbers = "".join(f'<span class="current">{n}</span>' if n == current else
                      f'<a href="{SOURCE}?page={n}">{n}</a>' if n > 1 else f'<a href="{SOURCE}">1</a>'
                      for n in range(1, last + 1))
    previous = f'<a class="prev" href="{SOURCE}?page={current - 1}">‹</a>' if current > 1 else ""
    return f'<div class="pagination">{previous}{numbers}</div>'


def test_a_numbered_pager_without_a_next_link_leads_to_the_page_numbered_after_this_one():
    third = _page(_listing([6, 5, 4], _numbered_pager(3, 5)), SOURCE + "?page=3", depth=2, reason=OVERFLOW_REASON)
    assert next_page_url(third, None, KnownNextPages()) == SOURCE + "?page=4"  # not back to the first links
    # The last page: only pages behind it — the list ends, no read-on goes back.
    last = _page(_listing([3, 2, 1], _numbered_pager(5, 5)), SOURCE + "?page=5", depth=4, reason=OVERFLOW_REASON)
    assert next_page_url(last, None, KnownNextPages()) is None
    # A script's pager: every number a link, this page's too — its number is the one that leads back to it.
    scripted = "".join(f'<li><a href="#page-{n}" data-href="{SOURCE}?page={n}">{n}</a></li>' for n in range(1, 6))
    page = _page(_listing([6, 5, 4], f'<ul class="pages">{scripted}</ul>'), SOURCE + "?page=3", depth=2,
                 reason=OVERFLOW_REASON)
    assert next_page_url(page, None, KnownNextPages()) == SOURCE + "?page=4"


def _chain_read(detector: ChangeDetector, page: PageFetched) -> tuple[list[int], bool]:
    """A read-on page read as the stage reads it: the numbers of its new items, and whether it reads on."""
    records = read_records(page).records
    new = detector.new_items(records, SOURCE, page.crawl_id, overflow=True, read_at_ms=page.list_read_at_ms)
    return ([int(item.item_url.rstrip("/").rsplit("/", 1)[1]) for item in new],
            overflowed(records, new, detector.reached_known(records, SOURCE, page.list_read_at_ms), True))


def test_a_read_on_ends_at_what_was_known_before_its_own_first_page_not_a_later_revisits():
    detector = ChangeDetector({}, {})
    _read(detector, _page(_listing([3, 2, 1], NEXT_PAGER), reason="source", at=1), "crawl-1")
    # A burst: the revisit at minute 2 finds its first page all new and reads on; the next revisit, at minute 3,
    # reads the first page again (all new again) before the first read-on's pages come.
    first = _page(_listing([12, 11, 10], NEXT_PAGER), at=2)
    assert _read(detector, first, "revisit-40")
    assert _read(detector, _page(_listing([15, 14, 13], NEXT_PAGER), at=3).model_copy(
        update={"crawl_id": "revisit-41"}), "revisit-41")
    request = next_page_request(first, SOURCE + "?page=2", max_pages=30)
    assert request.list_read_at_ms == first.fetched_at_ms
    chain = [_page(_listing(numbers, NEXT_PAGER), f"{SOURCE}?page={n}", depth=n - 1, reason=OVERFLOW_REASON,
                   at=3 + n).model_copy(update={"list_read_at_ms": request.list_read_at_ms})
             for n, numbers in ((2, [15, 14, 13]), (3, [12, 11, 10]), (4, [9, 8, 7]), (5, [6, 5, 4]), (6, [3, 2, 1]))]
    # The list has moved on by three: the chain's next pages show what the later revisit and the chain's own
    # first page showed — no mark of where the missed items end — then the items pushed off before minute 2.
    assert [_chain_read(detector, page) for page in chain] == [
        ([], True), ([], True), ([9, 8, 7], True), ([6, 5, 4], True), ([], False)]
    assert next_page_request(chain[0], SOURCE + "?page=3", max_pages=30).list_read_at_ms == first.fetched_at_ms


def _burst_read_on(written: str | None, max_pages: int, dated_max_pages: int) -> tuple[int, int]:
    """A list of five, items 5…1 (May 1) read at noon on May 1; by the revisit late on May 2, 250 items more
    (dated as `written`, or undated): (new items reported, pages read) as the stage reads on."""
    def listing(numbers: range) -> str:
        items = "".join(f'<li><h3><a href="/news/{n}/">Council news number {n}</a></h3>'
                        + (f"<p>{written if n > 5 else 'May 1, 2026'}</p>" if written else "") + "</li>"
                        for n in numbers)
        return f"<html><body><main><ul>{items}</ul>{NEXT_PAGER}</main></body></html>"

    detector = ChangeDetector({}, {})
    _read(detector, _page(listing(range(5, 0, -1)), reason="source", at=1), "crawl-1")
    page = _page(listing(range(255, 250, -1)), at=2).model_copy(update={
        "tick_at": datetime(2026, 5, 2, 23, tzinfo=UTC), "list_read_before": datetime(2026, 5, 1, 12, tzinfo=UTC)})
    records = read_records(page).records
    new = detector.new_items(records, SOURCE, "revisit-40")
    reported, pages = len(new), 1
    while overflowed(records, new, detector.reached_known(records, SOURCE, page.list_read_at_ms), pages > 1):
        request = next_page_request(page, f"{SOURCE}?page={pages + 1}",
                                    read_on_budget(page, records, max_pages, dated_max_pages))
        if request is None:
            break
        top = 255 - 5 * pages
        page = _page(listing(range(top, top - 5, -1)), request.url, depth=request.depth, reason=OVERFLOW_REASON,
                     at=2 + pages).model_copy(update={field: getattr(request, field) for field in (
                         "list_read_at_ms", "list_read_before", "tick_at")})
        records = read_records(page).records
        new = detector.new_items(records, SOURCE, page.crawl_id, overflow=True, read_at_ms=page.list_read_at_ms)
        reported, pages = reported + len(new), pages + 1
    return reported, pages


def test_a_burst_dated_since_the_last_read_is_read_on_past_the_page_budget():
    # Some 250 items of one publication series between two reads of a list of five (the 5,000-site soak lost
    # the 100 past the read-on's 30 pages on three such lists): dated since the last read, they are new by
    # their dates, and the read-on goes on to the first known item (page 51). Undated, or dated before the
    # last read (an archive the detector misread as new), it stops at the budget; the dated budget bounds both.
    assert _burst_read_on("May 2, 2026", max_pages=30, dated_max_pages=100) == (250, 51)
    assert _burst_read_on(None, max_pages=30, dated_max_pages=100) == (150, 30)
    assert _burst_read_on("April 20, 2026", max_pages=30, dated_max_pages=100) == (150, 30)
    assert _burst_read_on("May 9, 2026", max_pages=30, dated_max_pages=100) == (150, 30)  # events to come
    assert _burst_read_on("May 2, 2026", max_pages=30, dated_max_pages=40) == (200, 40)
