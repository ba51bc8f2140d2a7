"""SearXNG, the self-hostable metasearch engine, as domain discovery's web search: its JSON API
(`GET /search?q=…&format=json&pageno=N` → `{"results": [{"url", "title", "content", …}], …}`).

The instance is the operator's own (configured by URL, often on localhost), so it is asked directly, not
through the crawler's address guard. Every way it can fail — down, slow, the JSON format not enabled (403),
an error status, a body that is not its JSON — is one exception with the reason, for the rounds to report.
"""

from __future__ import annotations

import aiohttp

TIMEOUT_SECONDS = 20


class SearchUnavailable(Exception):
    pass


async def searxng_search(session: aiohttp.ClientSession, base_url: str, query: str, page: int = 1) -> list[str]:
    """The result URLs (http and https only) of one results page for `query`."""
    endpoint = base_url.rstrip("/") + "/search"
    try:
        async with session.get(endpoint, params={"q": query, "format": "json", "pageno": str(page)},
                               timeout=aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)) as response:
            if response.status == 403:
                raise SearchUnavailable(f"SearXNG at {base_url} refuses the JSON format (HTTP 403): add `json` to "
                                        "search.formats in its settings.yml")
            if response.status != 200:
                raise SearchUnavailable(f"SearXNG at {base_url} answered HTTP {response.status}")
            body = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError) as error:
        raise SearchUnavailable(f"SearXNG at {base_url} is unreachable: {error or type(error).__name__}") from None
    except ValueError:
        raise SearchUnavailable(f"SearXNG at {base_url} answered something that is not JSON") from None
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, list):
        raise SearchUnavailable(f"SearXNG at {base_url} answered JSON without a results list")
    return [result["url"] for result in results
            if isinstance(result, dict) and isinstance(result.get("url"), str)
            and result["url"].startswith(("http://", "https://"))]
