"""The demo's figures against the simulated web's truth."""

from datetime import datetime

from jobs.demo import evaluate_new_items, evaluate_pagination, evaluate_records

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
    missed = evaluate_new_items(ITEMS, detected[1:2], reads)
    assert missed["new_item_recall"] == 0.5 and missed["new_item_precision"] == 1.0
    assert evaluate_new_items(ITEMS, [], reads)["new_item_precision"] is None


def test_discovery_episodes_are_scored_with_the_offline_evaluations_figures():
    from jobs.demo import evaluate_discovery

    truth = {"a": {"homepage": "http://a/", "source_pages": [{"url": "http://a/events"}]},
             "b": {"homepage": "http://b/", "source_pages": []},
             "c": {"homepage": "http://c/", "source_pages": [{"url": "http://c/news"}]}}
    episodes = [{"homepage": "http://a/", "clicks": 2, "end": "found", "found": ["http://a/events"]},
                {"homepage": "http://b", "clicks": 1, "end": "found", "found": ["http://b/about"]},
                {"homepage": "http://c/", "clicks": 3, "end": "stop", "found": []}]
    assert evaluate_discovery(truth, episodes, seconds=30) == {
        "episodes": 3, "source_pages_found": 1, "precision": 0.2, "recall": 0.5, "unit_cost": 5.0,
        "clicks_on_negative_sites": 1.0, "ends": {"found": 2, "stop": 1, "budget": 0, "error": 0},
        "false_finds": 1, "episodes_per_minute": 6.0}


def test_revisits_are_scored_per_week_beside_fixed_intervals_on_the_same_ticks():
    from datetime import UTC, datetime, timedelta

    from jobs.demo_revisits import evaluate_revisits

    start = datetime(2026, 1, 5, tzinfo=UTC)
    url = "https://a.example/events"
    # One item a day at 07:30 for 10 days; the model fetches at the end of each 07:00–08:00 tick only.
    items = [{"published_at": (start + timedelta(days=d, hours=7.5)).isoformat()} for d in range(10)]
    truth = {"a": {"source_pages": [{"url": url, "items": items}]}}
    decisions = [(url, start + timedelta(hours=h), (h - 8) % 24 == 0) for h in range(1, 24 * 10 + 1)]
    result = evaluate_revisits(truth, decisions, 1.0, start, weeks=2)
    assert result["items_published"] == 10 and result["model"]["timeliness"] == 1.0
    assert result["model"]["friendliness"] == 1.0
    weeks = result["weeks"]
    assert [w["items_published"] for w in weeks] == [7, 3]
    for week in weeks:
        assert week["model"]["timeliness"] == 1.0 and week["rc_1"]["timeliness"] == 1.0
        assert week["rc_1"]["friendliness"] == 0.0 and abs(week["rc_2"]["friendliness"] - 0.5) < 0.05


def test_the_live_estimate_of_a_week_is_the_difference_of_the_sums_at_its_boundaries():
    from datetime import UTC, datetime, timedelta

    from jobs.demo_revisits import live_weeks

    t0 = datetime(2026, 11, 24, tzinfo=UTC)
    sums = []
    # A page's flushes, placed by its own clock (ticks watched): the last of week 1 at tick 160, of week 2 at 330.
    for minute, (ticks, revisits, updates, timely) in enumerate([(5, 1, 0, 0), (160, 15, 7, 7), (330, 40, 14, 10)]):
        for name, value in (("ticks_watched", ticks), ("revisits", revisits), ("update_ticks", updates),
                            ("timely_ticks", timely), ("new_items", updates), ("delay_hours_sum", 0.0)):
            sums.append(("p", name, float(value), t0 + timedelta(minutes=minute)))
    weeks = live_weeks(sums, 2, 1.0)
    # Week 1: 7 of 7 update ticks caught, 15 revisits of which 8 on quiet ticks, out of 153 quiet ticks.
    assert weeks[0] == {"timeliness": 1.0, "friendliness": round((153 - 8) / 153, 4)}
    # Week 2: 3 of 7 caught, 25 revisits, 22 on quiet ticks out of 163.
    assert weeks[1] == {"timeliness": round(3 / 7, 4), "friendliness": round((163 - 22) / 163, 4)}
    # Counted from a later start (the watch phase's, after the flush at tick 5): week 1 runs from tick 5 to
    # 173, its last flush still the one at 160 — 14 revisits, 7 on quiet ticks, out of 148 quiet ticks.
    later = live_weeks(sums, 1, 1.0, began=t0 + timedelta(seconds=30))
    assert later[0] == {"timeliness": 1.0, "friendliness": round((148 - 7) / 148, 4)}
