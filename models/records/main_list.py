"""A page's main list as records: the candidate record sets of the page (models.records.candidates), the one
built like the list's template where an earlier page of the same list gave one, else the list ranker's
choice (models.records.ranker); and a paginated list read page by page with its first page's template.
"""

from __future__ import annotations

from collections.abc import Sequence

import lxml.html

from models.records.candidates import ListCandidate, candidate_features, page_candidates, shortlist
from models.records.data_regions import DataRegion, element_children
from models.records.dates import numeric_day_first
from models.records.extraction import (
    Extraction,
    in_navigation,
    list_links,
    text_of,
    build_record,
    record_key,
    record_signature,
    region_template,
    tag_path,
)
from models.records.ranker import Ranking, default_ranker
from models.records.witnesses import Fingerprint


def _extraction(regions: list[ListCandidate], chosen: ListCandidate | None, base_url: str) -> Extraction:
    texts = [" ".join(c.texts) for c in regions[:2]]
    texts += [""] * (2 - len(texts))
    if chosen is None:
        return Extraction(region_texts=(texts[0], texts[1]), regions=len(regions))
    language = chosen.region.parent.getroottree().getroot().get("lang") or ""
    day_first = numeric_day_first(chosen.texts, language)
    links = list_links(chosen.records, base_url)
    records = [build_record(nodes, base_url, position, day_first, links)
               for position, nodes in enumerate(chosen.records)]
    return Extraction(records=records, template=region_template(chosen),
                      region_texts=(texts[0], texts[1]), regions=len(regions),
                      in_navigation=in_navigation(chosen.region.parent))


def extract_records(root: lxml.html.HtmlElement | None, base_url: str, template: str = "",
                    ranker: Ranking | None = None, witness: Fingerprint = frozenset()) -> Extraction:
    """The records of one page's main list — the candidate built like `template` (from an earlier page of the
    same list) where the page has one, else the one the list ranker chooses (default: the shipped one), told
    by `witness` (the fingerprint of the site's other pages) what is the site's template; no records when the
    page has no repeated structure."""
    candidates = page_candidates(root, base_url)
    ranker = ranker or default_ranker()
    alike = [index for index, candidate in enumerate(candidates) if template and region_template(candidate) == template]
    chosen = candidates[alike[0]] if len(alike) == 1 else None
    if len(alike) > 1:
        # Lists built alike (a menu and the list, each a `ul` of `li` under the same path): the ranker picks
        # among them, as it picked the list from among them at the first read.
        features = candidate_features(candidates, root, base_url, witness, alike)
        chosen = candidates[alike[ranker.choose(features)]]
    if chosen is None and template and root is not None:
        chosen = _single_record(root, template)
    if chosen is None and candidates:
        described = shortlist(candidates)
        index = ranker.choose(candidate_features(candidates, root, base_url, witness, described))
        chosen = candidates[described[index]] if index is not None else None
    # The data regions, largest first (the source-page classifier reads the two largest).
    return _extraction([c for c in candidates if c.generator == "mdr"], chosen, base_url)


def _single_record(root: lxml.html.HtmlElement, template: str) -> ListCandidate | None:
    """The records built like the template on a page that has too few of them for a region (the last page
    of a list often holds one item): the template parent's children with the template's tag and class."""
    path, roots = template.split("|", 1)
    signatures = roots.split("+")
    span = len(signatures)
    for parent in root.iter():
        if isinstance(parent.tag, str) and tag_path(parent) == path:
            children = element_children(parent)
            records = [children[i:i + span] for i in range(len(children) - span + 1)
                       if [record_signature(child) for child in children[i:i + span]] == signatures]
            texts = [text_of(nodes) for nodes in records]
            if records and all(texts):
                return ListCandidate(DataRegion(parent=parent, records=records, span=span), texts, "template")
    return None


def extract_list(pages: Sequence[tuple[lxml.html.HtmlElement | None, str]], ranker: Ranking | None = None,
                 witness: Fingerprint = frozenset()) -> list[Extraction]:
    """The records of each page of one paginated list, read with the template of its first page that has
    records; an item is kept on the first page it appears on only."""
    template = ""
    seen: set[str] = set()
    extractions = []
    for root, url in pages:
        extraction = extract_records(root, url, template, ranker, witness)
        template = template or extraction.template
        unique = []
        for record in extraction.records:
            if record_key(record) in seen:
                continue
            seen.add(record_key(record))
            unique.append(record)
        extraction.records = unique
        extractions.append(extraction)
    return extractions
