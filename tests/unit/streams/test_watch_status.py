"""`sourcewatch watch --status` as a person reads it: each page on a line of its own, figures not yet known as
"–", hours known whole."""

from __future__ import annotations

from streams.cli.watch import _print_status


def test_each_page_is_printed_with_its_figures_below_it(capsys):
    rows = [{"source": "https://club.example.org/events/", "timeliness": 0.75, "friendliness": None,
             "delay_h": 2.5, "fetches_per_item": None, "updates_per_day": 1.25, "known_hours": 48.0,
             "peaks": "Mon 09:00", "updated": "2026-11-28 23:44:19"},
            {"source": "https://other.example.org/news/", "timeliness": None, "friendliness": None,
             "delay_h": None, "fetches_per_item": None, "updates_per_day": None, "known_hours": None,
             "peaks": None, "updated": "2026-11-28 23:45:00"}]
    _print_status(rows)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "2 watched pages"
    assert lines[1] == "https://club.example.org/events/"
    assert lines[2].split() == ["timeliness", "0.750", "friendliness", "–", "delay_h", "2.500", "fetches_per_item", "–"]
    assert "updates_per_day 1.250  known 48 h  peaks Mon 09:00" in lines[3]
    assert lines[4] == "https://other.example.org/news/"
    assert "updates_per_day –  known –  peaks –" in lines[6]


def test_no_pages_says_why(capsys):
    _print_status([])
    assert "no watched page has figures yet" in capsys.readouterr().out
