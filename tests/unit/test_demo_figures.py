"""The demo's figures against the simulated web's truth."""

from datetime import UTC, datetime

import pytest

from jobs.demo import evaluate_new_items, evaluate_pagination, evaluate_records, first_read_later, reported_between

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


def _item(url: str, published: str, visible: bool = True) -> dict:
    return {"url": url, "published_at": published, "visible": visible}


ITEMS = {"site-0": {"source_pages": [
    {"url": "http://a/news/", "pages": ["http://a/news/"], "items": [
        _item("http://a/news/1", "2026-01-05T08:00:00+00:00"), _item("http://a/news/2", "2026-01-05T10:00:00+00:00"),
        _item("http://a/news/3", "2026-01-05T12:30:00+00:00", visible=False),
        _item("http://a/news/4", "2026-01-05T20:00:00+00:00", visible=False)]},
    {"url": "http://a/blog/", "pages": [f"http://a/blog/{n}" for n in range(12)], "items": [
        _item("http://a/blog/x", "2026-01-01T00:00:00+00:00")]},
]}}


def test_record_precision_counts_items_of_their_source_and_recall_only_lists_within_budget():
    records = [("http://a/news/", "http://a/news/1"), ("http://a/news/", "http://a/about/"),
               ("http://a/blog/", "http://a/blog/x")]
    figures = evaluate_records(ITEMS, ["http://a/news/", "http://a/blog/"], records, budget=10)
    assert figures["record_precision"] == round(2 / 3, 4)
    # The blog's 12 pages exceed the budget: only the news list counts for recall (1 of its 2 visible items).
    assert figures["record_recall"] == 0.5 and figures["record_recall_sources"] == 1


def test_new_items_are_due_when_published_between_the_two_reads_of_their_source():
    reads = {"http://a/news/": (datetime.fromisoformat("2026-01-05T09:00:00+00:00"),
                                datetime.fromisoformat("2026-01-05T14:00:00+00:00"))}
    detected = [("http://a/news/", "http://a/news/2"), ("http://a/news/", "http://a/news/3"),
                ("http://a/news/", "http://a/news/1")]
    figures = evaluate_new_items(ITEMS, detected, reads)
    # news/2 (10:00) and news/3 (12:30) were published between the reads; news/1 (08:00) before the first.
    assert figures["new_items_due"] == 2 and figures["new_item_recall"] == 1.0
    assert figures["new_item_precision"] == round(2 / 3, 4)
    # The wrong report is shown with its publication and the page's two reads.
    assert figures["wrong_examples"] == [{"source": "http://a/news/", "item": "http://a/news/1",
                                          "published_at": "2026-01-05T08:00:00+00:00",
                                          "reads": ["2026-01-05T09:00:00+00:00", "2026-01-05T14:00:00+00:00"]}]
    missed = evaluate_new_items(ITEMS, detected[1:2], reads)
    assert missed["new_item_recall"] == 0.5 and missed["new_item_precision"] == 1.0
    # Each missed item says why: read but never reported (seeded as known), reported outside the two reads, or
    # never read.
    assert missed["missed"] == {"never read": 1}
    assert missed["missed_examples"] == [{"source": "http://a/news/", "item": "http://a/news/2",
                                          "published_at": "2026-01-05T10:00:00+00:00", "why": "never read"}]
    # news/2, due, reported by the first read's own further page: in time (recall), not a detection (precision).
    later = evaluate_new_items(ITEMS, detected[1:2], reads,
                               first_read_further={("http://a/news/", "http://a/news/2"),
                                                   ("http://a/news/", "http://a/news/1")})
    assert later["new_item_recall"] == 1.0 and later["new_item_precision"] == 1.0
    assert later["due_reported_by_the_first_read"] == 1 and later["missed"] == {}
    seeded = evaluate_new_items(ITEMS, [], reads, read={("http://a/news/", "http://a/news/2")},
                                reported={("http://a/news/", "http://a/news/3")})
    assert seeded["missed"] == {"read, never reported": 1, "reported, not between the reads": 1}
    assert evaluate_new_items(ITEMS, [], reads)["new_item_precision"] is None


def test_new_items_count_as_found_between_the_reads_by_the_time_of_the_read_that_reported_them():
    def at(hour: int) -> datetime:
        return datetime(2026, 1, 5, hour, tzinfo=UTC)

    news = "http://a/news/"
    reported = {
        (news, "before"): (at(8), "revisit-3"),  # a revisit before the first read
        (news, "first-read"): (at(9), "crawl-1"),  # the first read's page: new against the reads before it
        (news, "first-read-next-page"): (at(10), "crawl-1"),  # the first read's further page, fetched later
        (news, "revisit-between"): (at(10), "revisit-7"),
        (news, "reread"): (at(12), "crawl-2"),
        (news, "reread-next-page"): (at(13), "crawl-2"),  # the re-read's next page, fetched after the list
        (news, "revisit-after"): (at(13), "revisit-9"),  # a revisit after the re-read: outside the window
        ("http://b/", "unread"): (at(10), "revisit-7"),  # no re-read of its page: no window
    }
    first_read, reread = {news: at(9), "http://b/": at(9)}, {news: at(12)}
    assert reported_between(reported, "crawl-1", first_read, reread, "crawl-2") == [
        (news, "revisit-between"), (news, "reread"), (news, "reread-next-page")]
    # The first read's own further page is the first read's: in time for the items due, outside precision.
    assert first_read_later(reported, "crawl-1", first_read) == {(news, "first-read-next-page")}


def test_discovery_episodes_are_scored_with_the_offline_evaluations_figures():
    from jobs.demo import evaluate_discovery

    truth = {"a": {"homepage": "http://a/", "source_pages": [{"url": "http://a/events"}, {"url": "http://a/news"}]},
             "b": {"homepage": "http://b/", "source_pages": []},
             "c": {"homepage": "http://c/", "source_pages": [{"url": "http://c/news"}]}}
    # Site a's episode found its events and its news.
    episodes = [{"homepage": "http://a/", "clicks": 2, "end": "found", "found": ["http://a/events", "http://a/news"]},
                {"homepage": "http://b", "clicks": 1, "end": "found", "found": ["http://b/about"]},
                {"homepage": "http://c/", "clicks": 3, "end": "stop", "found": []}]
    assert evaluate_discovery(truth, episodes, seconds=30) == {
        "episodes": 3, "source_pages_found": 2, "pages_found": 3, "precision": 0.4, "recall": 0.5,
        "source_pages_reached": 0.6667, "unit_cost": 2.5, "clicks_on_negative_sites": 1.0,
        "ends": {"found": 2, "stop": 1, "budget": 0, "error": 0}, "false_finds": 1, "episodes_per_minute": 6.0}


def test_revisits_are_scored_per_week_beside_fixed_intervals_on_the_same_ticks():
    from datetime import UTC, datetime, timedelta

    from jobs.demo_revisits import evaluate_revisits, published_times

    start = datetime(2026, 1, 5, tzinfo=UTC)
    url = "https://a.example/events"
    # One item a day at 07:30 for 10 days; the model fetches at the end of each 07:00–08:00 tick only.
    items = [{"published_at": (start + timedelta(days=d, hours=7.5)).isoformat()} for d in range(10)]
    truth = {"a": {"source_pages": [{"url": url, "items": items}]}}
    decisions = [(url, start + timedelta(hours=h), (h - 8) % 24 == 0) for h in range(1, 24 * 10 + 1)]
    result = evaluate_revisits(published_times(truth), decisions, 1.0, start, weeks=2)
    assert result["items_published"] == 10 and result["model"]["timeliness"] == 1.0
    assert result["model"]["friendliness"] == 1.0
    weeks = result["weeks"]
    assert [w["items_published"] for w in weeks] == [7, 3]
    for week in weeks:
        assert week["model"]["timeliness"] == 1.0 and week["rc_1"]["timeliness"] == 1.0
        assert week["rc_1"]["friendliness"] == 0.0 and abs(week["rc_2"]["friendliness"] - 0.5) < 0.05


def test_the_live_estimate_scores_the_updates_the_reads_placed_over_the_same_ticks():
    from datetime import UTC, datetime, timedelta

    from jobs.demo_revisits import evaluate_revisits

    start = datetime(2026, 1, 5, tzinfo=UTC)
    url = "https://a.example/events"
    # The model fetches at 08:00 every day for 10 days; the reads placed an update at 08:00 on days 0–6 (the
    # revisit's own tick: timely) and at 07:00 on days 7–9 (a tick before: late). Week 2 is 3 days long.
    placed = [start + timedelta(days=d, hours=8 if d < 7 else 7) for d in range(10)]
    decisions = [(url, start + timedelta(hours=h), (h - 8) % 24 == 0) for h in range(1, 24 * 10 + 1)]
    weeks = evaluate_revisits({url: placed}, decisions, 1.0, start, weeks=2)["weeks"]
    assert weeks[0]["model"]["timeliness"] == 1.0 and weeks[0]["model"]["friendliness"] == 1.0
    # Week 2: no update tick caught; its 3 fetches fell on 3 of its 69 quiet ticks.
    assert weeks[1]["model"]["timeliness"] == 0.0
    assert weeks[1]["model"]["friendliness"] == pytest.approx((69 - 3) / 69, abs=1e-4)
