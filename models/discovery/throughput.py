"""`sourcewatch bench discovery`: how fast the discovery agent scores anchors, with its text cache cold
(every anchor text and URL path embedded for the first time) and warm (menus repeat on every page of a site,
so a running worker is mostly warm).

The pages are every page of the given site folders (<data>/sites by default) as the agent sees them: the
same-site anchors of each, scored a batch of pages per call as the discovery stage does, and one page per call.
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


def bench_discovery(agent: RLCrawler, paths: list[Path], batch: int, pages_per_site: int = 20, runs: int = 3) -> dict:
    """Anchors per second, cold and warm: `batch` pages scored per call, as the discovery stage reads them
    (its batch; a quiet stream's batches are smaller), and, apart, one page per call."""
    pages = _pages(paths, pages_per_site)
    anchors = sum(len(page) for page in pages)
    batches = [pages[start:start + batch] for start in range(0, len(pages), batch)]

    def one_pass(pages_per_call: int) -> float:
        started = time.perf_counter()
        if pages_per_call == 1:
            for page in pages:
                agent.scores(page)
        else:
            for pages_of_call in batches:
                agent.logits_of_pages(pages_of_call)
        return time.perf_counter() - started

    figures = {"pages": len(pages), "anchors": anchors, "batch": batch, "runs": runs}
    for pages_per_call, named in ((batch, ""), (1, "_one_page")):
        agent.encoder.clear()
        cold = one_pass(pages_per_call)
        warm = statistics.median(one_pass(pages_per_call) for _ in range(runs))
        figures |= {f"cold_seconds{named}": round(cold, 2), f"warm_seconds{named}": round(warm, 2),
                    f"anchors_per_s_cold{named}": round(anchors / cold),
                    f"anchors_per_s_warm{named}": round(anchors / warm)}
    return figures
