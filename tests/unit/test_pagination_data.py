import csv

import lxml.html
import pytest

from models.pagination.data import clickable_nodes, gold_labels, load_pages

PAGE = """<html><body><a href="/">home</a>
<div class="pager"><a href="?p=1">1</a><span class="cur"><a href="?p=2">2</a></span>
<a class="next" href="?p=3"><span class="label">Next</span></a><button class="more">more</button></div>
</body></html>"""


def test_selectors_label_the_node_itself_an_inner_element_or_an_outer_one():
    root = lxml.html.fromstring(PAGE)
    row = {"PAGE": ".pager > a:first-child, .cur", "NEXT": ".next .label", "PREV": "", "LAST": "", "FIRST": ""}
    assert [n.tag for n in clickable_nodes(root)] == ["a", "a", "a", "a", "button"]
    assert gold_labels(root, row) == ["OTHER", "PAGE", "PAGE", "NEXT", "OTHER"]


def test_next_wins_and_bad_selectors_are_skipped():
    root = lxml.html.fromstring(PAGE)
    row = {"PAGE": ".pager a, ::nonsense((", "NEXT": "a.next", "FIRST": "button.more"}
    assert gold_labels(root, row) == ["OTHER", "PAGE", "PAGE", "NEXT", "PAGE"]


def test_loader_reads_the_csv_skips_failed_rows_and_decodes_by_encoding(tmp_path):
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "1.html").write_bytes(PAGE.replace("Next", "下一頁").encode("big5"))
    (tmp_path / "html" / "2.html").write_text(PAGE)
    with (tmp_path / "data.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["File Name", "Page URL", "Encoding", "PREV", "PAGE", "NEXT", "LAST",
                                         "FIRST", "failed"])
        writer.writeheader()
        writer.writerow({"File Name": "1", "Encoding": "big5", "NEXT": "a.next", "PAGE": ".pager > a:first-child"})
        writer.writerow({"File Name": "2", "Encoding": "utf-8", "NEXT": "a.next", "failed": "yes"})
    [page] = load_pages(tmp_path)
    assert page.name == "1" and "下一頁" in page.html and page.language == "en"
    assert page.labels == ("OTHER", "PAGE", "OTHER", "NEXT", "OTHER")


@pytest.mark.data
def test_the_real_sets_load_with_their_documented_counts(data_dir):
    autopager = load_pages(data_dir / "pagination" / "autopager")
    prnsm = load_pages(data_dir / "pagination" / "prnsm")
    # Pages without pagination, as the data README states: 49 and 92.
    assert sum(1 for p in autopager if set(p.labels) == {"OTHER"}) == 49
    assert sum(1 for p in prnsm if set(p.labels) == {"OTHER"}) == 92
    assert {p.language for p in prnsm} >= {"en", "zh", "es", "de", "ja", "ru"}
    assert sum(label == "NEXT" for p in prnsm for label in p.labels) > 200
