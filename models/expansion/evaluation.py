"""`sourcewatch eval expand --pages`: DWDBRM's ranking on real pages — given a few sample source pages, how
high does each ranker put the other source pages among everything indexed.

The pages: every HTML page of the site folders given (laid out like <data>/sites; relevant = the source
pages their manifests mark), and by default also <data>/records: City Scrapers' listing fixtures (US public
agencies' meeting lists: relevant) and their detail pages, and Estuka's search-result lists (products, books,
jobs: list pages of other domains, not relevant). <data>/pagination is left out: its pages carry no
event/news label. All go into one local index (models.expansion.index), whose link graph gives PageRank.

Per draw: K samples drawn at random among the relevant pages; every other indexed page is ranked; P@N is the
share of relevant pages among the first N, and the ranks of the remaining relevant pages give the mean and
median rank (Eq. 12–15). Figures are the means over the draws; nothing is fitted beforehand.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import numpy as np

from models.discovery.data import load_sites, normalized_path
from models.expansion.index import PageIndex
from models.expansion.ranking import RANKERS, rank_candidates

CUTOFFS = (10, 20, 35)


class NoPages(ValueError):
    pass


@dataclass(frozen=True)
class LabelledPage:
    url: str
    html: str
    relevant: bool


def site_pages(paths: list[Path]) -> Iterator[LabelledPage]:
    """Every HTML page of the site folders, at its original URL (a directory's index.html as the directory)."""
    for site in load_sites(paths):
        manifest = json.loads((site.folder.root.parent / "manifest.json").read_text())
        base = manifest.get("base_url") or f"https://{site.name}.invalid/"
        for file in sorted(site.folder.root.rglob("*.htm*")):
            relative = file.relative_to(site.folder.root).as_posix()
            served = site.folder.prefix + relative
            if relative.endswith("index.html"):
                relative = relative[: -len("index.html")]
            yield LabelledPage(urljoin(base, relative), file.read_text(errors="replace"),
                               site.is_source("http://local" + served))


def record_pages(records: Path) -> Iterator[LabelledPage]:
    """City Scrapers' HTML fixtures (listings relevant) and Estuka's result lists (not relevant)."""
    city = records / "city-scrapers"
    if (city / "labels.jsonl").is_file():
        for line in (city / "labels.jsonl").read_text().splitlines():
            label = json.loads(line)
            file = city / "fixtures" / label["fixture"]
            if label.get("format") == "html" and file.is_file():
                yield LabelledPage(label.get("url") or f"https://city-scrapers.invalid/{label['fixture']}",
                                   file.read_text(errors="replace"), label.get("page_role") == "listing")
    estuka = records / "estuka"
    for file in sorted(estuka.rglob("*.htm*")) if estuka.is_dir() else []:
        parts = file.relative_to(estuka).parts
        yield LabelledPage(f"https://{parts[1].replace(' ', '-').lower()}.estuka.invalid/" + "/".join(parts),
                           file.read_text(errors="replace"), False)


def precision_at(ordered_relevant: np.ndarray, n: int) -> float:
    return float(ordered_relevant[:n].mean()) if len(ordered_relevant) else 0.0


def evaluate_expand(site_folders: list[Path], records: Path | None, samples: int = 10, draws: int = 5,
                    seed: int = 0, progress: Callable[[str], None] | None = None) -> dict:
    pages = list(site_pages(site_folders)) + (list(record_pages(records)) if records else [])
    if not pages:
        raise NoPages(f"no pages in {', '.join(map(str, site_folders))}")
    index = PageIndex()
    relevant: dict[str, bool] = {}
    for page in pages:
        indexed = index.add(page.url, page.html)
        relevant[indexed.url] = relevant.get(indexed.url, False) or page.relevant
    texts, sites = {}, {}
    for page in index.pages():
        texts[page.url], sites[page.url] = page.words(), page.site
    urls = list(texts)
    edges = index.edges()
    positives = [url for url in urls if relevant[url]]
    if len(positives) <= samples:
        raise NoPages(f"{len(positives)} relevant pages: too few to draw {samples} samples and rank the rest")
    if progress:
        progress(f"{len(urls)} pages indexed ({len(positives)} relevant), {len(edges)} links")
    rng = random.Random(seed)
    per_draw: dict[str, list[dict]] = {name: [] for name in ("combined", *RANKERS)}
    for draw in range(draws):
        chosen = set(rng.sample(positives, samples))
        candidates = [url for url in urls if url not in chosen]
        by_ranker = rank_candidates([texts[url] for url in chosen], [sites[url] for url in chosen],
                                    [texts[url] for url in candidates], candidates, edges)
        is_relevant = np.array([relevant[url] for url in candidates])
        for name, placed in by_ranker.items():
            order = np.argsort(placed, kind="stable")
            ranks = placed[is_relevant]
            per_draw[name].append({f"p_at_{n}": precision_at(is_relevant[order], n) for n in CUTOFFS}
                                  | {"mean_rank": float(ranks.mean()), "median_rank": float(np.median(ranks))})
        if progress:
            progress(f"draw {draw + 1}/{draws}: combined P@20 {per_draw['combined'][-1]['p_at_20']:.3f}")
    index.close()
    return {name: {key: round(statistics.fmean(draw[key] for draw in figures), 4) for key in figures[0]}
            for name, figures in per_draw.items()} | {
        "pages": len(urls), "relevant": len(positives), "links": len(edges),
        "protocol": f"{samples} samples drawn among the relevant pages, {draws} draws (seed {seed}); every other "
                    f"indexed page ranked; means over the draws"}
