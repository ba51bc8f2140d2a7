"""The message key: the site a URL belongs to.

A site is the registered domain (public suffix + one label), so that
www.example.org and events.example.org share a partition, per-site politeness
and per-site episode state. IP addresses and single-label hosts have no
registered domain; for them the site is host:port, so that several sites served
on one loopback address on different ports stay apart.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlsplit

import tldextract

# The bundled public suffix snapshot: never fetch the list at run time.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@lru_cache(maxsize=65536)
def site_of(url: str) -> str:
    """The site key of a URL ('' when the URL has no host)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host:
        return ""
    registered = _EXTRACT(host).top_domain_under_public_suffix
    if registered:
        return registered
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{host}:{port}"
