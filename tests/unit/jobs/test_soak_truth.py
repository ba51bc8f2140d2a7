"""The soak's rows that were no new item, held against the simulated web's truth (jobs.soak_truth)."""

from datetime import UTC, datetime, timedelta

from jobs.soak_truth import _not_new

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
