from copy import deepcopy

import pytest

from models.web.decoding import decode_body, looks_binary
from models.web.dom import (
    document_place, element_at, parse_html, read_once, remembered, text_content, tree_changed,
)

TEXT = "<html><body><h1>活動訊息：市民講座與親子活動報名開始，歡迎踴躍參加</h1><p>最新消息與公告</p></body></html>" * 3


@pytest.mark.parametrize("encoding", ["big5", "gb18030", "utf-8"])
def test_declared_charset_in_header(encoding):
    body = TEXT.encode(encoding)
    text, used = decode_body(body, f"text/html; charset={encoding}")
    assert text == TEXT


def test_meta_charset_when_the_header_has_none():
    body = ('<meta charset="gbk">' + TEXT).encode("gbk")
    text, used = decode_body(body, "text/html")
    assert TEXT in text and used == "gb18030"


@pytest.mark.parametrize("encoding", ["big5", "gbk", "shift_jis"])
def test_undeclared_legacy_charsets_are_detected(encoding):
    source = TEXT if encoding != "shift_jis" else "<p>イベント情報：市民講座と親子イベントの申し込みが始まりました。最新のお知らせ</p>" * 5
    text, used = decode_body(source.encode(encoding), "text/html")
    assert text == source, used


def test_a_lying_header_falls_back_to_detection():
    text, _ = decode_body(TEXT.encode("big5"), "text/html; charset=utf-8")
    assert text == TEXT


def test_broken_utf8_still_yields_text():
    body = TEXT.encode("utf-8")[:-5] + b"\xff\xfe\xfa" + b"<p>end</p>"
    text, _ = decode_body(body, "text/html; charset=utf-8")
    assert "end" in text and "活動訊息" in text


def test_binary_detection():
    assert looks_binary(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    assert not looks_binary(TEXT.encode("utf-8"))
    assert not looks_binary(b"")


def test_characters_xml_cannot_hold_are_dropped_before_parsing_even_as_references():
    # lxml keeps them in the tree's text, then refuses that text when a stage writes it back.
    root = parse_html("<p>a\x01b&#1;c&#xFFFE;d&#x7;e\ud800&#65;&#x263A;</p>")
    assert root.text_content() == "abcdeA\u263a"
    root.find(".//p").text = " " + root.find(".//p").text  # writing it back works


def test_a_pages_texts_are_read_once_until_its_tree_changes():
    root = parse_html("<ul><li>first <b>item</b></li><li>second</li></ul>")
    item = root.find(".//li")
    with read_once():
        assert text_content(item) == "first item"
        item.find("b").text = "edited"
        assert text_content(item) == "first item"  # remembered: inside, the tree is taken as unchanged …
        tree_changed()
        assert text_content(item) == "first edited"  # … until whoever changed it says so
        assert remembered("key", lambda: 1) == 1
        assert remembered("key", lambda: 2) == 1
    # Outside, nothing is remembered.
    item.find("b").text = "again"
    assert text_content(item) == "first again"
    assert remembered("key", lambda: 3) == 3


def test_an_elements_place_finds_its_copy_in_a_copy_of_the_tree():
    root = parse_html("<div><p>intro</p><ul><li>one</li><li>two <b>bold</b></li></ul></div><p>after</p>")
    bold = root.find(".//b")
    copy = deepcopy(root)
    found = element_at(copy, document_place(bold))
    assert found is not bold and found.tag == "b" and found.getparent().text == "two "
    # Sorting by place is document order.
    elements = list(root.iter())
    assert sorted(reversed(elements), key=document_place) == elements
