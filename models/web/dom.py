"""Parsing HTML into an lxml tree the same way everywhere (decoded text in, never re-guessed)."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

import lxml.etree
import lxml.html

_UTF8_PARSER = lxml.etree.HTMLParser(encoding="utf-8", remove_comments=True)
# lxml.html's own parser picks each element's class by a Python callback, run every time the tree hands out an
# element (half a million times on a large page's record extraction); this C lookup gives every element
# HtmlElement (text_content, links…) without it. Nothing here uses lxml.html's form-field classes.
_UTF8_PARSER.set_element_class_lookup(lxml.etree.ElementDefaultClassLookup(
    element=lxml.html.HtmlElement, comment=lxml.html.HtmlComment, pi=lxml.html.HtmlProcessingInstruction,
    entity=lxml.html.HtmlEntity))
_SPACES = re.compile(r"\s+")
# Invisible marks editors leave in text (zero-width space, word joiner, a stray byte-order mark): a reader sees
# nothing there, so a record's text and title hold nothing there ("\u200bMinutes" is "Minutes"). Zero-width
# (non-)joiners are kept: they shape words in several scripts.
_INVISIBLE = "\u200b\u2060\ufeff"
_DROP_INVISIBLE = str.maketrans("", "", _INVISIBLE)
# Characters XML cannot hold (C0 controls but tab and line breaks, lone surrogates, U+FFFE/U+FFFF): lxml's
# parser keeps some in text, and then refuses the tree's text when a stage writes it back (mis-declared UTF-16
# and binary junk in a page bring them). They carry no text: dropped before parsing.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# The same characters written as numeric character references (`&#1;`, `&#xFFFE;`): the parser decodes them.
_REFERENCE = re.compile(r"&#(x[0-9a-f]{1,8}|[0-9]{1,10});?", re.IGNORECASE)
# What one page's reading has worked out about its tree, inside `read_once` (None outside): per thread of
# control, as pages are read in several threads at once.
_page_memo: ContextVar[dict[Hashable, object] | None] = ContextVar("page_memo", default=None)
_Value = TypeVar("_Value")


def _unless_not_xml(reference: re.Match) -> str:
    code = reference.group(1)
    point = int(code[1:], 16) if code[0] in "xX" else int(code)
    return "" if point < 0x110000 and _NOT_XML.match(chr(point)) else reference.group(0)


def _xml_safe(html: str) -> str:
    if _NOT_XML.search(html):  # rare: searching costs two thirds of substituting, which copies every page
        html = _NOT_XML.sub("", html)
    return _REFERENCE.sub(_unless_not_xml, html) if "&#" in html else html


def normalize_space(text: str) -> str:
    """Runs of whitespace as one space, none at the ends, invisible marks dropped."""
    if any(mark in text for mark in _INVISIBLE):  # rare; translating copies the text char by char
        text = text.translate(_DROP_INVISIBLE)
    return _SPACES.sub(" ", text).strip()


@contextmanager
def read_once() -> Iterator[None]:
    """Inside it, an element's text (`text_content`) and whatever else is asked through `remembered` is worked
    out once: a page's candidate lists share their records and anchors, and record extraction read the same
    element's text about twice over (a tenth of its time on the largest Estuka pages). The tree must not change
    inside, or whoever changes it calls `tree_changed` after."""
    token = _page_memo.set({})
    try:
        yield
    finally:
        _page_memo.reset(token)


def tree_changed() -> None:
    """What `read_once` remembers of the tree is forgotten (it changed: elements dropped, text moved)."""
    memo = _page_memo.get()
    if memo is not None:
        memo.clear()


def remembered(key: Hashable, work_out: Callable[[], _Value]) -> _Value:
    """`work_out()`, once per key inside `read_once` (every time outside it)."""
    memo = _page_memo.get()
    if memo is None:
        return work_out()
    if key not in memo:
        memo[key] = work_out()
    return memo[key]  # type: ignore[return-value]


def text_content(element: lxml.html.HtmlElement) -> str:
    """The element's text, what lxml's `text_content()` gives (the same on every node of the labelled pages),
    read without XPath. lxml gives up the GIL to evaluate an XPath, and a thread that gives it up waits up to the
    interpreter's switch interval (5 ms) to take it back while another thread runs Python: in a worker, where
    the event loop runs beside the threads that read pages, a `text_content()` call cost ~0.5 ms instead of
    ~1 µs, and a page's record extraction 380 ms instead of 6.5. Read once per element inside `read_once`."""
    # `remembered` written out: this runs tens of thousands of times a page, and a closure per call shows.
    memo = _page_memo.get()
    if memo is None:
        return _text_content(element)
    text = memo.get(element)
    if text is None:
        text = memo[element] = _text_content(element)
    return text  # type: ignore[return-value]


def _text_content(element: lxml.html.HtmlElement) -> str:
    if not len(element):  # no child nodes: its own text (a comment's or instruction's, too)
        return element.text or ""
    return "".join(element.itertext())


def document_place(element: lxml.html.HtmlElement) -> tuple[int, ...]:
    """Where the element lies in its tree: its own and its ancestors' places among their parents' child nodes,
    from the root (cheap for a few elements: numbering a large page's every element costs ~17 ms). Sorting by it
    is document order; `element_at` finds the element at the same place in a copy of the tree."""
    place = []
    while (parent := element.getparent()) is not None:
        place.append(parent.index(element))
        element = parent
    return tuple(reversed(place))


def element_at(root: lxml.html.HtmlElement, place: tuple[int, ...]) -> lxml.html.HtmlElement:
    """The element at `place` (document_place) under `root`."""
    for index in place:
        root = root[index]
    return root


def parse_html(html: str) -> lxml.html.HtmlElement | None:
    """The document root, or None when lxml finds no document in the text."""
    if not html.strip():
        return None
    try:
        # Bytes would make lxml re-guess the encoding; the text is already decoded.
        return lxml.html.document_fromstring(_xml_safe(html).encode("utf-8"), parser=_UTF8_PARSER)
    except (lxml.etree.ParserError, ValueError):
        return None


def fragment_text(html: str) -> str:
    """The text of an HTML fragment (a feed's summary, a calendar event's description), its text nodes spaced
    apart — a `<br>` or a paragraph ends a sentence —; plain text as it is."""
    if "<" not in html:
        return normalize_space(html)
    try:
        fragment = lxml.html.fragment_fromstring(_xml_safe(html), create_parent="div")
    except (lxml.etree.ParserError, ValueError):
        return normalize_space(html)
    return normalize_space(" ".join(fragment.itertext()))
