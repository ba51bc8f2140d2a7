"""The SearXNG adapter (infra.searxng) against a loopback server speaking its JSON API, and every way it fails."""

import aiohttp
import pytest
from aiohttp import web

from infra.searxng import SearchUnavailable, searxng_search
from tests.conftest import free_port, serving_app


@pytest.fixture
async def searxng():
    """Answers /search as the next of `answers` says: a JSON results page (dict), a status (int) or raw text."""
    state = {"answers": [], "asked": []}

    async def search(request: web.Request) -> web.Response:
        state["asked"].append(dict(request.query))
        answer = state["answers"].pop(0)
        if isinstance(answer, int):
            return web.Response(status=answer)
        if isinstance(answer, str):
            return web.Response(text=answer, content_type="text/html")
        return web.json_response(answer)

    app = web.Application()
    app.router.add_get("/search", search)
    async with serving_app(app) as url:
        state["url"] = url + "/"
        yield state


async def test_results_are_the_http_urls_of_the_page_asked_for(searxng):
    searxng["answers"].append({"query": "museum events", "number_of_results": 3, "results": [
        {"url": "https://museum.example/events/", "title": "Events", "content": "…", "engine": "duckduckgo"},
        {"url": "javascript:alert(1)", "title": "x"}, {"title": "no url"},
        {"url": "http://club.example/", "title": "Club"}], "unresponsive_engines": []})
    async with aiohttp.ClientSession() as session:
        urls = await searxng_search(session, searxng["url"], "museum events", page=2)
    assert urls == ["https://museum.example/events/", "http://club.example/"]
    assert searxng["asked"] == [{"q": "museum events", "format": "json", "pageno": "2"}]


@pytest.mark.parametrize(("answer", "reason"), [
    (403, "refuses the JSON format"), (502, "answered HTTP 502"), ("<html>results</html>", "not JSON"),
    ({"error": "no"}, "without a results list")])
async def test_each_failure_is_one_exception_with_its_reason(searxng, answer, reason):
    searxng["answers"].append(answer)
    async with aiohttp.ClientSession() as session:
        with pytest.raises(SearchUnavailable, match=reason):
            await searxng_search(session, searxng["url"], "events")


async def test_a_searxng_that_is_down_is_unavailable():
    async with aiohttp.ClientSession() as session:
        with pytest.raises(SearchUnavailable, match="unreachable"):
            await searxng_search(session, f"http://127.0.0.1:{free_port(18590)}", "events")
