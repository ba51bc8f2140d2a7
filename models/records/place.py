"""Where a listed event takes place, when its record says: marked up (an `<address>`, schema.org's location or
address, an element whose class or id names a place), after a pin (📍) or after a label ("Location:", "Lieu :").

Event and meeting lists show the place beside the date; news lists seldom do, so most news records have none.
"""

from __future__ import annotations

import re

import lxml.html

from models.web.dom import normalize_space, text_content

PLACE_CHARS = 160
# Class or id words of an element that holds a place, in the languages of the lists read most.
_PLACE_WORDS = re.compile(r"(?<![a-z])(location|venue|place|address|adresse|where|lieu|ort|luogo|lugar|"
                          r"sede|veranstaltungsort|plaats|locatie|sted)(?![a-z])", re.IGNORECASE)
_PLACE_PROPERTIES = {"location", "address"}
# Block elements that hold a line of a record: a labelled place written in one ends with it (not a `<br>` line: an
# "Address:" on the next line goes on with its venue).
_LINE_TAGS = ("p", "li", "dd", "dt", "td", "div")
_ADDRESS = re.compile(r"(?:address|adresse|anschrift|dirección|indirizzo|endereço)\s*:\s*(.+)", re.IGNORECASE)
# The round pushpin: what event cards write before a place where they print no label.
PIN = "\N{ROUND PUSHPIN}"
_PLACE_LABELS = (r"location|venue|place|where|address|lieu|ort|lugar|luogo|local|sede|veranstaltungsort|locatie|"
                 r"lokasjon|sted|plats")
# A label, then the place up to the next label-like word, the next label of another kind ("Zeitraum:"; a place's
# "Address:" goes on with it), a separator or the end.
_LABELLED = re.compile(rf"(?<!\w)(?:{_PLACE_LABELS})\s*:\s*(.+?)(?=\s+(?:date|time|when|agenda|minutes|details|"
                       r"more|read more|register|zeit|datum|heure|fecha|hora)\b\s*:?|"
                       rf"\s+(?!(?:{_PLACE_LABELS})\s*:)[^\W\d_]{{3,20}}\s*:\s|\s+[|·•]|$)", re.IGNORECASE)


def record_place(elements: list[lxml.html.HtmlElement], text: str) -> str:
    """The record's place, or "" where it shows none; never the whole record (a card whose class says
    "location" is a place card, not a place)."""
    for element in elements:
        for node in element.iterdescendants():
            if not isinstance(node.tag, str) or not _marks_place(node):
                continue
            place = normalize_space(text_content(node))
            if place and len(place) < len(text):
                return _without_label(place)[:PLACE_CHARS]
    if PIN in text:
        pinned = (place for element in elements for node in element.iter()
                  if isinstance(node.tag, str) and (place := _pinned(node)))
        if place := next(pinned, ""):
            return place[:PLACE_CHARS]
    match = _LABELLED.search(text)
    if not match:
        return ""
    # The label's own line or paragraph ends the place where the record's text runs on into the next one; an
    # address on the line after goes on with its venue.
    for element in elements:
        for node in element.iter(*_LINE_TAGS):
            if line := _LABELLED.match(normalize_space(text_content(node))):
                place = line[1].strip(" ,;")
                after = node.getnext()
                address = _ADDRESS.match(normalize_space(text_content(after))) if after is not None else None
                return (f"{place}, {address[1]}" if address else place)[:PLACE_CHARS]
    return match[1].strip(" ,;")[:PLACE_CHARS]


def _pinned(node: lxml.html.HtmlElement) -> str:
    """The place an element marks with the pin emoji (📍 Main hall), written after the pin in the element or,
    where the pin stands alone in an icon's element, right after that element."""
    if not (node.text or "").lstrip().startswith(PIN):
        return ""
    return normalize_space(text_content(node)).removeprefix(PIN).strip() or normalize_space(node.tail or "")


def _marks_place(node: lxml.html.HtmlElement) -> bool:
    if node.tag == "address" or (node.get("itemprop") or "").lower() in _PLACE_PROPERTIES:
        return True
    # The word's bounds are any non-letter, so "event-location" and "venue_name" name a place.
    return _PLACE_WORDS.search(f"{node.get('class') or ''} {node.get('id') or ''}") is not None


def _without_label(place: str) -> str:
    """The place without a leading label its element repeats ("Location: City Hall")."""
    match = _LABELLED.match(place)
    return match[1].strip(" ,;") if match else place
