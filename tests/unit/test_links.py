from agents.links import links_of
from models.web.links import canonical_url, extract_anchors
from schemas.crawl import FetchErrorKind, PageFetched

HTML = """<html><head><base href="https://example.org/en/"></head><body>
<nav><ul><li><a href="events/">Events</a></li><li><a href="/news?b=2&a=1#top">最新消息</a></li></ul></nav>
<main><p>See <a href="https://other.org/x">elsewhere</a> or <a href="javascript:void(0)">js</a>
<a href="mailto:a@b.c">mail</a> <a href="#">top</a> <a>no href</a> <a href="http://[broken">bad</a></p></main>
</body></html>"""


def test_extracts_followable_anchors_in_document_order():
    anchors = extract_anchors(HTML, "https://example.org/en/index.html")
    assert [a.url for a in anchors] == [
        "https://example.org/en/events/",
        "https://example.org/news?a=1&b=2",
        "https://other.org/x",
    ]
    events, news, other = anchors
    assert events.text == "Events" and news.text == "最新消息"
    assert events.tag_path == "html/body/nav/ul/li/a"
    assert events.same_site and news.same_site and not other.same_site
    assert other.nearby_text.startswith("See elsewhere")


def test_broken_or_empty_html_gives_no_anchors():
    assert extract_anchors("", "https://example.org/") == []
    assert extract_anchors("<<<>>>\x00 not html", "https://example.org/") == []
    assert [a.text for a in extract_anchors("<p><a href=/x>unclosed", "https://example.org/")] == ["unclosed"]


def test_canonical_url_drops_fragments_and_sorts_query():
    assert canonical_url("https://example.org/a?z=1&a=2#frag") == "https://example.org/a?a=2&z=1"


def test_only_successful_html_pages_have_links():
    base = dict(site="example.org", url="https://example.org/", final_url="https://example.org/", crawl_id="c")
    page = PageFetched(**base, status=200, content_type="text/html; charset=utf-8", body=HTML)
    assert len(links_of(page).anchors) == 3
    assert links_of(PageFetched(**base, status=404, error=FetchErrorKind.HTTP_ERROR)) is None
    assert links_of(PageFetched(**base, status=200, content_type="application/json", body="{}")) is None


def test_a_redelivered_page_yields_the_same_link_message_id():
    base = dict(site="example.org", url="https://example.org/", final_url="https://example.org/", crawl_id="c")
    page = PageFetched(**base, status=200, content_type="text/html", body=HTML)
    other = PageFetched(**base, status=200, content_type="text/html", body=HTML)
    assert links_of(page).event_id == links_of(page).event_id != links_of(other).event_id
