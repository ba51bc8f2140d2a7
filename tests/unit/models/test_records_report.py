"""`sourcewatch records`' lines: one column of links after titles of any script."""

import unicodedata
from datetime import UTC, datetime

from models.records.report import current_records


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(char) in ("W", "F") else 1 for char in text)


def test_links_stand_in_one_column_after_latin_and_japanese_titles_of_any_length():
    rows = [{"date": datetime(2021, 11, 2, 19, tzinfo=UTC), "title": title, "item_url": f"https://e.org/{n}",
             "place": None, "published": None, "event_start": None}
            for n, title in enumerate(("Workcation talk", "ワーケーションって結局何？沖縄のワーケーションを再考する",
                                       "ワーケーション" * 20, "A" * 80))]
    lines = current_records(rows)
    starts = {_columns(line[:line.index("https://")]) for line in lines}
    assert len(starts) == 1 and lines[0].startswith("  2021-11-02 19:00  Workcation talk")


def test_a_records_hour_is_shown_where_its_page_tells_it_from_rows_read_either_way():
    # Read straight from chDB, dates are datetimes; through the worker that holds it, ISO text.
    rows = [{"date": datetime(2021, 11, 2, 19, tzinfo=UTC), "title": "Talk", "item_url": "https://e.org/1",
             "place": "Naha", "published": None, "event_start": "2021-11-02T19:00:00+00:00"},
            {"date": "2021-11-08T00:00:00+00:00", "title": "Fair", "item_url": "", "place": None,
             "published": None, "event_start": None},
            {"date": None, "title": "Undated", "item_url": "https://e.org/3", "place": None, "published": None,
             "event_start": None}]
    lines = current_records(rows)
    assert lines[0].startswith("  2021-11-02 19:00  Talk") and lines[1] == " " * 20 + "at Naha"
    assert lines[2] == " " * 20 + "event starts 2021-11-02 19:00"
    assert lines[3].startswith("  2021-11-08        Fair") and lines[3].endswith("(no link)")
    assert lines[4].startswith("  " + " " * 16 + "  Undated")
