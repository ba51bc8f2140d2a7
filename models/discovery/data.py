"""Labelled sites for source-page discovery: which served URL paths are a site's event/news listing pages.

A site folder is laid out as <data>/sites/<name>/ (`site/` and `manifest.json` with `serve_prefix`,
`negative` and `source_pages`, each with the `path` of its file under the site root); see the data's README.
Paths are compared normalised: a trailing `index.html` dropped, so `/posts/index.html` and `/posts/` are one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from infra.site_server import SiteFolder, find_sites


@dataclass(frozen=True)
class LabelledSite:
    folder: SiteFolder
    # Normalised URL paths of its source pages, as served.
    source_paths: frozenset[str]
    negative: bool
    # Normalised URL paths of their lists' further pages.
    pagination_paths: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def source_count(self) -> int:
        return len(self.source_paths)

    def is_source(self, url: str) -> bool:
        return normalized_path(url) in self.source_paths


def normalized_path(url: str) -> str:
    path = unquote(urlsplit(url).path) or "/"
    for index in ("index.html", "index.htm"):
        if path.endswith("/" + index):
            path = path[: -len(index)]
    return path


def load_sites(paths: list[Path]) -> list[LabelledSite]:
    """The labelled sites among these folders (a site folder, or a folder of them); unlabelled ones are skipped."""
    sites = []
    for folder in find_sites(paths):
        manifest_path = folder.root.parent / "manifest.json"
        if not manifest_path.is_file():
            continue
        manifest = json.loads(manifest_path.read_text())
        paths_served = frozenset(normalized_path(folder.prefix + page["path"].lstrip("/"))
                                 for page in manifest.get("source_pages", []))
        further = frozenset(normalized_path(folder.prefix + page["path"].lstrip("/"))
                            for page in manifest.get("pagination", []))
        sites.append(LabelledSite(folder, paths_served, bool(manifest.get("negative")) or not paths_served, further))
    return sites
