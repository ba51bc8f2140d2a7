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
    assert len(starts) == 1 and lines[0].startswith("  2021-11-02  Workcation talk")
