"""Turn a fetched body into text: charset from the header, then the HTML meta tag, then detection."""

from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
# Labels that browsers treat as supersets: decode as the superset so no byte is lost.
_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "big5": "big5hkscs", "shift_jis": "cp932", "iso-8859-1": "cp1252"}


def _known(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _SUPERSETS.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def charset_from_content_type(content_type: str) -> str | None:
    match = re.search(r"charset\s*=\s*([^;\s]+)", content_type, re.IGNORECASE)
    return _known(match.group(1)) if match else None


def charset_from_meta(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:4096])
    return _known(match.group(1).decode("ascii", "ignore")) if match else None


# Control bytes that text never holds (tab, newline, vertical tab, form feed and carriage return excepted).
_CONTROL_BYTES = bytes(b for b in range(32) if not 9 <= b <= 13)


def looks_binary(body: bytes) -> bool:
    """True when the first bytes hold NULs or mostly control bytes (not text in any charset)."""
    head = body[:4096]
    if not head:
        return False
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls / len(head) > 0.1


def decode_body(body: bytes, content_type: str = "") -> tuple[str, str]:
    """(text, encoding used). Never raises: undecodable bytes become U+FFFD."""
    declared = charset_from_content_type(content_type) or charset_from_meta(body)
    if declared:
        try:
            return body.decode(declared), declared
        except UnicodeDecodeError:
            pass  # the declaration lies; detect below
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    best = from_bytes(body[:65536]).best()
    if best is not None:
        encoding = _known(best.encoding) or best.encoding
        return body.decode(encoding, errors="replace"), encoding
    return body.decode(declared or "utf-8", errors="replace"), declared or "utf-8"
