"""Anchor boxes for the RL agent's auxiliary task: where each link sits on the rendered page.

Training pages are rendered once each in headless Chromium (Debian's binary, driven by Playwright; its own
browser downloads are never used) at a 1280×800 viewport, and every <a href> gives its box (x, y, w, h) in
page coordinates, divided by the viewport width. Only the page's own origin is loaded (other requests are
aborted: nothing leaves the machine, and a missing stylesheet fails fast). Boxes are cached on disk by the
page's path and HTML, so cross-validation folds and later runs render nothing twice. Inference never renders.

The agent's target for an anchor is its box and its two neighbours' in the page's anchor sequence (12
numbers; a missing neighbour is zeros), as in the seed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from models.web.links import canonical_url, resolve_href

log = logging.getLogger(__name__)
VIEWPORT = {"width": 1280, "height": 800}
# Boxes further down than this many viewport widths are clipped: the aim is layout, not page length.
MAX_DEPTH = 4.0
LOAD_TIMEOUT_MS = 15_000
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]
_BOXES_JS = """Array.from(document.querySelectorAll('a[href]')).map(a => {
    const r = a.getBoundingClientRect();
    return [a.getAttribute('href'), r.x + window.scrollX, r.y + window.scrollY, r.width, r.height];
})"""

# One rendered page: each <a href> in document order, (raw href, x, y, w, h) scaled.
PageBoxes = list[tuple[str, float, float, float, float]]


class BrowserUnavailable(RuntimeError):
    """No Chromium to render training pages with."""


class AnchorBoxes:
    """Renders pages in one headless Chromium and remembers their anchor boxes (in memory and on disk)."""

    def __init__(self, executable: Path, cache_dir: Path | None = None) -> None:
        if not executable.is_file():
            raise BrowserUnavailable(f"no Chromium at {executable}: `make setup` installs Debian's chromium (or "
                                     "set SOURCEWATCH_CHROMIUM), or train without the auxiliary task (--no-aux)")
        self.executable = executable
        self.cache_dir = cache_dir
        # URL → boxes; None for a page that could not be rendered (no targets: not zeros to learn from).
        self.known: dict[str, PageBoxes | None] = {}
        self._playwright = self._browser = None

    async def __aenter__(self) -> AnchorBoxes:
        from playwright.async_api import async_playwright

        self._playwright = await async_playwright().start()
        self._browser = await self._playwright.chromium.launch(executable_path=str(self.executable),
                                                               args=BROWSER_ARGS)
        return self

    async def __aexit__(self, *exc) -> None:
        await self._browser.close()
        await self._playwright.stop()

    async def measure(self, url: str, html: str) -> None:
        """Render the page (unless its boxes are known) and keep its anchors' boxes under its URL."""
        if url in self.known or not html:
            return
        key = hashlib.sha1(f"{urlsplit(url).path}\x00{html}".encode()).hexdigest()
        cached = self.cache_dir / f"{key}.json" if self.cache_dir else None
        if cached is not None and cached.is_file():
            self.known[url] = [tuple(box) for box in json.loads(cached.read_text())]
            return
        self.known[url] = boxes = await self._render(url)
        if cached is not None and boxes is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            # Written aside, then renamed: a process reading the cache beside this one never sees half a file.
            partial = cached.with_suffix(f".{os.getpid()}.partial")
            partial.write_text(json.dumps(boxes))
            partial.replace(cached)

    async def _render(self, url: str) -> PageBoxes | None:
        page = await self._browser.new_page(viewport=VIEWPORT)
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        await page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(origin)
                         else route.abort())
        try:
            await page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
            raw = await page.evaluate(_BOXES_JS)
        except Exception as error:  # noqa: BLE001 — Playwright raises its own error types; any failure: no boxes
            log.warning("could not render %s for anchor boxes: %s", url, error)
            return None
        finally:
            await page.close()
        width = VIEWPORT["width"]
        return [(href, x / width, min(y / width, MAX_DEPTH), w / width, min(h / width, MAX_DEPTH))
                for href, x, y, w, h in raw]

    def targets(self, page_url: str, anchor_urls: list[str]) -> np.ndarray | None:
        """(n, 12) targets for a page's anchors as the agent sees them — each one's box and its neighbours' —
        or None when the page was not rendered."""
        boxes = self.known.get(page_url)
        if not boxes:
            return None
        by_url: dict[str, list[tuple[float, ...]]] = {}
        for href, *box in boxes:
            resolved = resolve_href(page_url, href)
            if resolved:
                by_url.setdefault(canonical_url(resolved), []).append(tuple(box))
        own = np.zeros((len(anchor_urls) + 2, 4), dtype=np.float32)
        for index, url in enumerate(anchor_urls):
            if by_url.get(url):
                own[index + 1] = by_url[url].pop(0)
        return np.concatenate([own[:-2], own[1:-1], own[2:]], axis=1)
