import time

from agents.frontier import BfsFrontier
from schemas.links import Anchor, LinksScored


def _links(url: str, depth: int, targets: list[str], max_depth: int = 3, max_pages: int = 100) -> LinksScored:
    return LinksScored(
        site="example.org", page_url=url, final_url=url, crawl_id="c", depth=depth, max_depth=max_depth,
        max_pages=max_pages, anchors=[Anchor(url=t) for t in targets],
    )


def test_plans_unseen_same_site_links_one_level_deeper():
    frontier = BfsFrontier({}, {})
    planned = frontier.next_requests(_links("https://example.org/", 0, [
        "https://example.org/a", "https://example.org/", "https://www.example.org/b", "https://other.org/c",
        "https://example.org/a",
    ]))
    assert [(r.url, r.depth, r.reason) for r in planned] == [
        ("https://example.org/a", 1, "bfs"), ("https://www.example.org/b", 1, "bfs")]
    assert frontier.next_requests(_links("https://example.org/a", 1, ["https://example.org/", "https://example.org/b"])) != []
    assert frontier.next_requests(_links("https://example.org/b", 1, ["https://example.org/a"])) == []


def test_respects_depth_and_page_budget():
    frontier = BfsFrontier({}, {})
    deep = frontier.next_requests(_links("https://example.org/x", 3, ["https://example.org/deeper"], max_depth=3))
    assert deep == []
    frontier = BfsFrontier({}, {})
    targets = [f"https://example.org/p{i}" for i in range(10)]
    planned = frontier.next_requests(_links("https://example.org/", 0, targets, max_pages=4))
    assert len(planned) == 3  # the seed itself is the first page of the budget
    assert frontier.next_requests(_links("https://example.org/p0", 1, ["https://example.org/q"], max_pages=4)) == []


class _Writes(dict):
    """A mapping that counts its writes, as a table counts its changelog messages."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def __setitem__(self, key: str, value: int) -> None:
        self.writes += 1
        super().__setitem__(key, value)


def test_a_page_that_plans_nothing_new_writes_no_budget():
    planned = _Writes()
    frontier = BfsFrontier({}, planned)
    targets = [f"https://example.org/p{i}" for i in range(10)]
    assert len(frontier.next_requests(_links("https://example.org/", 0, targets, max_pages=4))) == 3
    assert planned.writes == 1 and planned == {"c\x00example.org": 4}
    # The budget spent, the site's later pages plan nothing and leave the count as it is.
    for i in range(3):
        assert frontier.next_requests(_links(f"https://example.org/p{i}", 1, ["https://example.org/q"],
                                             max_pages=4)) == []
    assert planned.writes == 1
    # A leaf of a fresh crawl (at the deepest level) plans nothing either: its seed's count stays implied.
    BfsFrontier({}, planned).next_requests(
        _links("https://example.org/x", 3, ["https://example.org/y"]).model_copy(update={"crawl_id": "d"}))
    assert planned.writes == 1


def test_crawls_are_independent():
    seen, planned = {}, {}
    frontier = BfsFrontier(seen, planned)
    one = frontier.next_requests(_links("https://example.org/", 0, ["https://example.org/a"]))
    other = BfsFrontier(seen, planned).next_requests(
        _links("https://example.org/", 0, ["https://example.org/a"]).model_copy(update={"crawl_id": "d"}))
    assert len(one) == len(other) == 1


def test_request_ids_follow_from_the_links_message():
    links = _links("https://example.org/", 0, ["https://example.org/a"])
    first = BfsFrontier({}, {}).next_requests(links)
    again = BfsFrontier({}, {}).next_requests(links)
    assert first[0].event_id == again[0].event_id


def test_a_crawls_end_goes_with_every_request_it_plans():
    from jobs.crawl import CrawlPlan, seed_requests, sent_now

    limited = CrawlPlan(seeds=["https://example.org/"], max_pages=10, max_depth=2, time_limit=60)
    assert seed_requests(limited, "c")[0].stop_at_ms is None
    # Its end counts from when the seeds are sent (a crawl's own worker starts in between).
    [seed] = sent_now(seed_requests(limited, "c"), limited)
    assert 0 < seed.stop_at_ms - time.time() * 1000 <= 60_000
    unlimited = CrawlPlan(seeds=["https://example.org/"], max_pages=10, max_depth=2)
    assert sent_now(seed_requests(unlimited, "c"), unlimited)[0].stop_at_ms is None
    links = _links("https://example.org/", 0, ["https://example.org/a"]).model_copy(
        update={"stop_at_ms": seed.stop_at_ms})
    [child] = BfsFrontier({}, {}).next_requests(links)
    assert child.stop_at_ms == seed.stop_at_ms
    assert not child.stopped(seed.stop_at_ms - 1) and child.stopped(seed.stop_at_ms)
