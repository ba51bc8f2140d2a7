import pytest
from pydantic import ValidationError

from schemas.crawl import CrawlRequest, FetchErrorKind, PageFetched
from schemas.registry import TOPICS, InvalidMessage, decode, encode
from schemas.sites import site_of


def _page(**fields) -> PageFetched:
    return PageFetched(site="example.org", url="https://example.org/", final_url="https://example.org/",
                       crawl_id="c1", **fields)


def test_every_topic_of_the_design_is_registered():
    assert set(TOPICS) == {
        "crawl.requests", "pages.fetched", "links.scored", "sources.found", "pagination.tags",
        "records.extracted", "changes.detected", "revisit.ticks", "revisit.decisions", "revisit.outcomes", "metrics",
        "deadletter",
        # ours: each discovery episode's end and cost, each domain expansion round, for ClickHouse
        "discovery.episodes", "expansion.rounds",
        # the update ticks each revisit's read placed: the live figures of any period
        "revisit.observed",
        # the service's: watches stopped, people's verdicts on found pages and on sites, webhooks and their posts
        "watch.stopped", "sources.verdicts", "sites.verdicts", "webhooks.set", "webhooks.deliveries",
    }


def test_messages_round_trip_and_keep_their_event_id():
    request = CrawlRequest(site="example.org", url="https://example.org/a", crawl_id="c1", depth=2)
    again = decode("crawl.requests", encode(request))
    assert again == request
    assert again.event_id == request.event_id


def test_messages_are_frozen_and_strict():
    request = CrawlRequest(site="example.org", url="https://example.org/", crawl_id="c1")
    with pytest.raises(ValidationError):
        request.url = "https://other.org/"
    with pytest.raises(ValidationError):
        CrawlRequest(site="example.org", url="https://example.org/", crawl_id="c1", surprise=1)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"not json", "Invalid JSON"),
        (b'{"site": "x", "crawl_id": "c"}', "url: Field required"),
        (None, "empty value"),
    ],
)
def test_invalid_messages_raise_with_a_reason(raw, reason):
    with pytest.raises(InvalidMessage) as raised:
        decode("crawl.requests", raw)
    assert reason in raised.value.reason


def test_a_newer_schema_version_is_refused():
    raw = encode(CrawlRequest(site="e.org", url="https://e.org/", crawl_id="c")).replace(
        b'"schema_version":1', b'"schema_version":2')
    with pytest.raises(InvalidMessage, match="schema_version"):
        decode("crawl.requests", raw)


def test_body_cap_cuts_on_a_character_boundary_and_flags_it():
    page = _page(status=200, body="活動訊息" * 1000)
    capped = page.with_body_capped(1001)
    assert capped.truncated and len(capped.body.encode()) <= 1001
    assert capped.body == "活動訊息" * 83 + "活"
    assert page.with_body_capped(10**6) is page


def test_ok_means_a_2xx_without_error():
    assert _page(status=200).ok
    assert not _page(status=404, error=FetchErrorKind.HTTP_ERROR).ok
    assert not _page(status=304, not_modified=True).ok


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://www.flink.apache.org/posts/", "apache.org"),
        ("https://events.city.gov.tw/list", "city.gov.tw"),
        ("http://127.0.0.1:8080/", "127.0.0.1:8080"),
        ("http://localhost/x", "localhost:80"),
        ("mailto:someone@example.org", ""),
    ],
)
def test_site_of(url, site):
    assert site_of(url) == site


def test_a_failed_batch_names_its_stage_and_no_validation_reason_reads_as_one():
    from schemas.deadletter import failed_stage, failure_reason
    from tests.hostile_messages import hostile_values

    try:
        raise KeyError("a key no page had")
    except KeyError as error:
        reason = failure_reason("extract_records", error, "Traceback …")
    assert reason.startswith("extract_records raised KeyError: 'a key no page had'\n")
    assert failed_stage(reason) == "extract_records"
    # Messages that failed to validate would fail alike if resent: none may read as a failed batch.
    for topic in TOPICS:
        for _, raw in hostile_values(topic, seed=3):
            with pytest.raises(InvalidMessage) as invalid:
                decode(topic, raw)
            assert failed_stage(invalid.value.reason) is None, invalid.value.reason
