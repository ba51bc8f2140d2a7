"""`sourcewatch expand`: domain discovery (DWDBRM) over the local index of fetched pages, its rounds sent to
`expansion.rounds` (hence ClickHouse's `expansion_rounds`), and the sites it found handed to discovery.

The rounds run here, on the index the worker that owns the stores keeps (models.expansion.rounds over
models.expansion.index); the found sites' homepages then go through Kafka as a discovery crawl (reason
`discover`), so the stream does the rest — discovery, reading, watching — as for any homepage.
"""

from __future__ import annotations

import asyncio
import uuid

from infra.kafka_broker import bootstrap_address
from infra.kafka_topics import send_messages
from infra.settings import Settings
from models.expansion.index import PageIndex
from models.expansion.rounds import Expansion
from models.web.links import canonical_url
from schemas.base import derived_event_id
from schemas.expansion import ExpansionRound
from schemas.sites import site_of


class NotIndexed(ValueError):
    pass


def expand(settings: Settings, samples: list[str], budget: int) -> tuple[Expansion, list[ExpansionRound]]:
    """The rounds from these sample pages, which must be in the index (a page sourcewatch has fetched)."""
    if not settings.page_index.is_file():
        raise NotIndexed(f"no page index at {settings.page_index}: turn indexing on "
                         "(SOURCEWATCH_PAGE_INDEX_ENABLED=true, or page_index_enabled in sourcewatch.toml) for the "
                         "workers, then crawl some sites")
    index = PageIndex(settings.page_index)
    urls = [canonical_url(url) for url in samples]
    indexed = {page.url for page in index.pages(urls)}
    missing = [url for url in urls if url not in indexed]
    if missing:
        index.close()
        raise NotIndexed(f"not in the page index ({len(index)} pages): {', '.join(missing)} — crawl them first "
                         f"(`sourcewatch crawl --seeds URL`)")
    expansion = Expansion(index, urls)
    rounds = expansion.run(budget)
    expansion_id = uuid.uuid4().hex
    site = site_of(urls[0])
    messages = [ExpansionRound(event_id=derived_event_id(expansion_id, str(r.number)), site=site,
                               expansion_id=expansion_id, round=r.number, operator=r.operator, returned=r.returned,
                               new_pages=r.new, reward=r.reward,
                               arm_scores={arm: score for arm, score in r.arm_scores.items() if score is not None},
                               seeds=r.seeds, end=expansion.end if r is rounds[-1] else "")
                for r in rounds]
    index.close()
    return expansion, messages


def send_rounds(settings: Settings, messages: list[ExpansionRound]) -> None:
    asyncio.run(send_messages(bootstrap_address(settings), settings.topic_prefix, settings.topic_partitions,
                              [("expansion.rounds", message) for message in messages]))
