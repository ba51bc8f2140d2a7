"""crawl.requests and pages.fetched: what to fetch, and what the fetch gave."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from schemas.base import Message

# Fetches whose pages are listings to read: a source page, and the further pages of its list.
LISTING_REASONS = ("source", "paginate")
# A watched listing's next page, fetched because a revisit found every item of the page before it new
# (agents.overflow).
OVERFLOW_REASON = "overflow"
# Later pages of a list: read with the template of its first page.
LATER_PAGE_REASONS = ("paginate", OVERFLOW_REASON)
# A feed that holds a watched page's list where the page itself shows none: the iCalendar feed of a calendar it
# shows in a frame, or its section's RSS/Atom feed (agents.list_feeds).
LIST_FEED_REASON = "list_feed"
# Fetches whose records are read: the listings, a source page fetched again to look for new items, the next
# pages of one whose items were all new, and the feeds that hold a page's list.
RECORD_REASONS = (*LISTING_REASONS, "revisit", OVERFLOW_REASON, LIST_FEED_REASON)
# A watched listing's item page, fetched for the time its listing did not give.
ITEM_TIME_REASON = "item_time"
# Fetches no user waits on: the fetch stage runs them as the pages already fetched are read (agents.fetch).
BACKGROUND_REASONS = (ITEM_TIME_REASON,)
# A topical crawl's fetches (agents.crawl_topically): its Q-learning frontier picks each next page of a site.
TOPICAL_REASON = "topical"
# A crawl's seeds and the pages its BFS frontier plans (agents.frontier).
SEED_REASON = "seed"
BFS_REASON = "bfs"
# A bulk crawl's fetches: fetched at the pace the pipeline reads pages, so that its pages do not queue in
# pages.fetched ahead of a watched page's revisit (agents.fetch); no page of them is dropped.
PACED_REASONS = (SEED_REASON, BFS_REASON, TOPICAL_REASON)
# Words a topic keeps at most: its keywords, and its sample pages' most frequent words.
TOPIC_KEYWORDS = 200
TOPIC_SAMPLE_WORDS = 500


class CrawlTopic(BaseModel):
    """What a topical crawl looks for: keywords (none: the event/news words sourcewatch looks for) and the word
    counts of sample pages (none: the keywords stand for them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    keywords: list[str] = Field(default_factory=list, max_length=TOPIC_KEYWORDS)
    sample: dict[str, float] = Field(default_factory=dict, max_length=TOPIC_SAMPLE_WORDS)


class CrawlScoped(Message):
    """A message about one crawl: which crawl, how deep this page is, and the crawl's budget."""

    crawl_id: str
    depth: int = 0
    max_depth: int = 50
    max_pages: int = 1000
    # The listing page this message belongs to, for a source page and the pages of its pagination.
    source_url: str | None = None
    # The revisit tick that asked for this fetch (reason "revisit"), on the scheduler's clock.
    tick_at: datetime | None = None
    # A read-on past a list's first page (agents.overflow): when the first page it reads on from was fetched (ms
    # since the epoch). Items known before it mark where what that read missed ends — not the source's latest
    # read, which a busy list's next revisit moves while the read-on is still on its way.
    list_read_at_ms: int | None = None
    # A revisit and its read-on: when the list was last read before it (the end of that read's tick, on the
    # scheduler's clock). Items dated since were published since: a read-on goes past its page budget only
    # over pages of such items (agents.overflow.dated_since).
    list_read_before: datetime | None = None
    # When the crawl ends (ms since the epoch, wall clock): a crawl given a time limit carries it in every
    # message, so that the workers stop it when its command does — a request that comes later is not fetched.
    stop_at_ms: int | None = None

    def stopped(self, now_ms: int) -> bool:
        """Whether the crawl has ended by its time limit."""
        return self.stop_at_ms is not None and now_ms >= self.stop_at_ms


class CrawlRequest(CrawlScoped):
    """A URL to fetch, with the crawl it belongs to and that crawl's budget."""

    url: str
    # Why it is fetched: seed, bfs, source (a listing page to read), paginate (a further page of one), revisit,
    # item_time (an item's page, for its publication time), overflow (a watched list's next page).
    reason: str = SEED_REASON
    referrer: str | None = None
    # Validators of the last fetch, for a conditional GET.
    etag: str | None = None
    last_modified: str | None = None
    # A topical crawl's seed carries its topic (its site's state keeps it from then on).
    topic: CrawlTopic | None = None


class FetchErrorKind(StrEnum):
    """Why a fetch did not give a usable page; `none` when it did."""

    NONE = "none"
    INVALID_URL = "invalid_url"
    BLOCKED_ADDRESS = "blocked_address"
    ROBOTS_DISALLOWED = "robots_disallowed"
    DNS = "dns"
    CONNECT = "connect"
    TIMEOUT = "timeout"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    REDIRECT_LOOP = "redirect_loop"
    HTTP_ERROR = "http_error"
    RATE_LIMITED = "rate_limited"
    UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type"
    BINARY_BODY = "binary_body"
    BODY_TOO_LARGE = "body_too_large"
    DECODE_ERROR = "decode_error"
    PROTOCOL = "protocol"


class PageFetched(CrawlScoped):
    """The outcome of one fetch, successful or not; the body is decoded text."""

    url: str
    final_url: str
    reason: str = SEED_REASON
    status: int = 0
    error: FetchErrorKind = FetchErrorKind.NONE
    error_detail: str = ""
    not_modified: bool = False
    content_type: str = ""
    encoding: str = ""
    body: str = ""
    body_bytes: int = 0
    # True when the body was cut at the fetch size cap or the message size cap.
    truncated: bool = False
    etag: str | None = None
    last_modified: str | None = None
    redirects: list[str] = Field(default_factory=list)
    attempts: int = 1
    # The site's time: from the request to the response (redirects and retries too), less the waits for the
    # host's politeness slot.
    fetch_ms: float = 0.0
    fetched_at_ms: int = 0
    topic: CrawlTopic | None = None

    @property
    def ok(self) -> bool:
        return self.error is FetchErrorKind.NONE and 200 <= self.status < 300

    def with_body_capped(self, max_bytes: int) -> PageFetched:
        """This page with its body cut to at most max_bytes of UTF-8 (flagged truncated)."""
        encoded = self.body.encode("utf-8")
        if len(encoded) <= max_bytes:
            return self
        cut = encoded[:max_bytes].decode("utf-8", errors="ignore")
        return self.model_copy(update={"body": cut, "truncated": True})
