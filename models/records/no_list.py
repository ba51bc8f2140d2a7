"""Why a page gave no list: a reason a person can act on, logged and counted by the stream where a read finds no
records, or finds only the site's menu.

Each reason is what the reading met, the most specific first: nothing lxml could read; markup nested past
libxml2's 255-level cut (everything below the cut is missing from the tree, the list with it); a frame (the
list may be another document — an embedded calendar —, not read unless it is a Google Calendar, whose feed the
stream reads: agents.list_feeds); a page whose repeated structure
is only its navigation (the menu of a page whose list is empty or not there yet); a page with no visible text
(its content drawn by a script, or an empty body); and otherwise no repeated structure at all (a page of
prose).
"""

from __future__ import annotations

import lxml.html

from models.records.extraction import Extraction, letters_of
from models.web.dom import text_content

NO_DOCUMENT = "no_document"
TOO_DEEP = "too_deep"
NO_TEXT = "no_text"
MENU_ONLY = "menu_only"
IN_A_FRAME = "in_a_frame"
NO_REPEATS = "no_repeats"
# Given by the stream, not by a page's reading: the feed that holds the page's list was not read
# (agents.list_feeds).
FEED_UNREAD = "feed_unread"
DESCRIPTIONS = {
    NO_DOCUMENT: "no HTML document in the body (empty, or nothing the parser could read)",
    TOO_DEEP: "markup nested past the parser's 255-level cut: what lies below it, the list with it, is not read",
    NO_TEXT: "no visible text: the page's content is drawn by its scripts, or it is empty",
    MENU_ONLY: "only the site's navigation repeats: the list is empty, not there yet, or drawn by a script",
    IN_A_FRAME: "no list in the page itself; its frames are other documents (of these only a Google Calendar's "
                "events are read, through its feed: agents.list_feeds)",
    NO_REPEATS: "no repeated structure: a page of prose or of a single item",
    FEED_UNREAD: "no list in the page itself, and the feed that holds it (the calendar it embeds, or its "
                 "section's feed) could not be fetched or read, or lists nothing",
}
# libxml2 stops building the tree below this depth (its default, without XML_PARSE_HUGE).
PARSER_DEPTH_CUT = 255
_FRAMES = ("iframe", "frame")


def no_list_reason(root: lxml.html.HtmlElement | None, extraction: Extraction) -> str:
    """The reason (one of DESCRIPTIONS) the page read into `extraction` shows no list; "" where it shows one.
    `root` is the tree the extraction read (its invisible elements dropped)."""
    if extraction.records and not extraction.in_navigation:
        return ""
    if root is None:
        return NO_DOCUMENT
    if _deepest(root) >= PARSER_DEPTH_CUT:
        return TOO_DEEP
    if next(root.iter(*_FRAMES), None) is not None:
        return IN_A_FRAME
    if extraction.in_navigation:
        return MENU_ONLY
    body = root.find("body")  # the head's title is no text a reader sees on the page
    if body is None or not letters_of(text_content(body)):
        return NO_TEXT
    return NO_REPEATS


def _deepest(root: lxml.html.HtmlElement) -> int:
    """The depth of the tree's deepest element (the root is 1). Walked only for pages without a list."""
    deepest, level = 0, {root: 1}
    for element in root.iter():
        depth = level.pop(element, None) or 1
        deepest = max(deepest, depth)
        for child in element:
            level[child] = depth + 1
    return deepest
