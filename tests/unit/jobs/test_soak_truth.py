"""The soak's rows that were no new item and its lost pages, held against the simulated web's truth
(jobs.soak_truth)."""

from datetime import UTC, datetime, timedelta

from jobs.soak_truth import _not_new, fallen_out, list_reads, why_missed

START = datetime(2026, 1, 5, tzinfo=UTC)
PAGE = "http://127.0.0.1:40001/news/"


def _truth() -> dict:
    items = [{"url": f"{PAGE}item-{n}.html", "published_at": (START + timedelta(hours=n - 3)).isoformat()}
             for n in range(1, 7)]
    return {"site-0001": {"source_pages": [{"url": PAGE, "items": items}]}}


def _row(created_hours: float) -> tuple[int, datetime, datetime]:
    created = START + timedelta(hours=created_hours)
    return 1, created, created


def test_rows_of_new_items_are_not_counted_and_every_other_row_is_by_its_reason():
    first_read = {PAGE: START}
    new = {(PAGE, f"{PAGE}item-{n}.html"): _row(n) for n in (4, 5, 6)}
    assert _not_new(_truth(), new, first_read) == {}
    wrong = new | {(PAGE, f"{PAGE}item-2.html"): _row(4),  # published before the first read: it seeded
                   (PAGE, "title:Contact us"): _row(4),  # no item of the list
                   ("http://127.0.0.1:40001/about/", "http://127.0.0.1:40001/team.html"): _row(4)}
    tally = _not_new(_truth(), wrong, first_read)
    assert dict(tally) == {"published before the page's first read": 1, "no item of the page's list": 1,
                           "on a page that is no source page": 1}
    assert tally.examples["no item of the page's list"][0]["item"] == "title:Contact us"
    assert tally.examples["published before the page's first read"][0]["published"].startswith("2026-01-04T23")


def test_an_item_is_not_found_only_where_even_what_was_published_during_the_read_leaves_it_on_the_first_page():
    item = START
    read_start, read_end = START + timedelta(minutes=10), START + timedelta(minutes=10, seconds=15)
    during = [START + timedelta(minutes=10, seconds=s) for s in (2, 4, 6)]  # published while the page was fetched
    before = [START + timedelta(minutes=m) for m in (3, 5)]
    # Two newer items before the fetch began and three during it: with five a page, it may have been pushed off.
    reason, read = why_missed([item, *before, *during], [read_start], [read_end], START + timedelta(days=1), 5)
    assert (reason, read) == ("pushed off the first page before the next read", read_start)
    # Four newer items by the fetch's end: it was on the page, and the read did not find it.
    reason, _ = why_missed([item, *before, *during[:2]], [read_start], [read_end], START + timedelta(days=1), 5)
    assert reason == "read after its publication, not found"
    # Four items published at one moment and four after them (site-0817's events in a soak of 2026-11-29): the
    # list shows the four newer and the first of the burst, so the burst's second, third and fourth lie below.
    burst = [START + timedelta(minutes=1)] * 4
    newer = [START + timedelta(minutes=m) for m in (4, 5, 6, 7)]
    for place in range(1, 4):
        reason, _ = why_missed([*burst[place:], *newer], [read_start], [read_end], START + timedelta(days=1), 5,
                               tied_above=place)
        assert reason == "pushed off the first page before the next read"
    assert why_missed([*burst, *newer], [read_start], [read_end], START + timedelta(days=1), 5)[0] == (
        "read after its publication, not found")
    # Its page's only read came after the window's end: not yet due.
    assert why_missed([item], [read_start], [read_end], START + timedelta(minutes=5), 5) == (
        "published after the page's last read", None)


def test_a_page_is_lost_when_its_decisions_stopped_not_when_its_partition_runs_late():
    # A 7-day window at 288×: a tenth is 16.8 simulated hours and 210 real seconds.
    window, speed, wall_end = timedelta(days=7), 288.0, datetime(2026, 11, 28, 16, 40, tzinfo=UTC)
    last_tick = {"on-time": START + timedelta(days=4, hours=18),
                 "late partition": START + timedelta(days=3, hours=15),  # a day behind, decided to the end
                 "dropped": START + timedelta(days=3, hours=15),  # as far behind, undecided for 20 minutes
                 "dropped at once": START}
    last_made = {"on-time": wall_end, "late partition": wall_end - timedelta(seconds=5),
                 "dropped": wall_end - timedelta(minutes=20), "dropped at once": wall_end - timedelta(minutes=35)}
    pages = [*last_tick, "never decided"]
    assert fallen_out(pages, last_tick, last_made, START, window, speed) == ["dropped", "dropped at once",
                                                                             "never decided"]


def test_a_list_is_read_by_its_reads_not_by_a_discovery_episodes_look_nor_by_a_fetch_whose_records_never_came():
    def fetch(minutes: float, reason: str) -> tuple[str, datetime, datetime, str]:
        end = START + timedelta(minutes=minutes)
        return PAGE, end, end - timedelta(milliseconds=20), reason

    rows = [fetch(0, "discover"), fetch(2, "source"), fetch(3, "revisit"), fetch(60, "revisit"), fetch(61, "revisit")]
    # The records of the fetch at 60 minutes were read; the one at 61 was made as the workers stopped.
    fetched, started = list_reads(rows, {PAGE: START + timedelta(minutes=60)})
    assert fetched[PAGE] == [START + timedelta(minutes=m) for m in (2, 3, 60)]
    assert started[PAGE] == [at - timedelta(milliseconds=20) for at in fetched[PAGE]]
    # A page whose records never came keeps every read of its list.
    assert len(list_reads(rows, {})[0][PAGE]) == 4
