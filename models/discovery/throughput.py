"""`sourcewatch bench discovery`: how fast the discovery agent scores anchors, with its text cache cold
(every anchor text and URL path embedded for the first time) and warm (menus repeat on every page of a site,
so a running worker is mostly warm).

The pages are every page of the given site folders (<data>/sites by default) as the agent sees them: the
same-site anchors of each, scored page by page (one batch per page, as the discovery stage does).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from models.discovery.agent import RLCrawler
from models.discovery.data import load_sites
from models.discovery.policies import Candidate
from models.web.links import extract_anchors


def _pages(paths: list[Path], limit: int) -> list[list[Candidate]]:
    pages = []
    for site in load_sites(paths):
        for file in sorted(site.folder.root.rglob("*.htm*"))[:limit]:
            url = f"http://{site.name}.invalid{site.folder.prefix}{file.relative_to(site.folder.root)}"
            anchors = [a for a in extract_anchors(file.read_text(encoding="utf-8", errors="replace"), url)
                       if a.same_site]
            if anchors:
                pages.append([Candidate(a.url, a.text, a.tag_path, 1, i) for i, a in enumerate(anchors)])
    return pages


def bench_discovery(agent: RLCrawler, paths: list[Path], pages_per_site: int = 20, runs: int = 3) -> dict:
    pages = _pages(paths, pages_per_site)
    anchors = sum(len(page) for page in pages)

    def one_pass() -> float:
        started = time.perf_counter()
        for page in pages:
            agent.scores(page)
        return time.perf_counter() - started

    agent.encoder.clear()
    cold = one_pass()
    warm = statistics.median(one_pass() for _ in range(runs))
    return {"pages": len(pages), "anchors": anchors, "cold_seconds": round(cold, 2), "warm_seconds": round(warm, 2),
            "anchors_per_s_cold": round(anchors / cold), "anchors_per_s_warm": round(anchors / warm),
            "runs": runs}
