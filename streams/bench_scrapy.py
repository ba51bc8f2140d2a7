"""The Scrapy side of `sourcewatch bench crawl`: a minimal CrawlSpider with our politeness and page budget.

Run as `sourcewatch bench scrapy --seeds URL… --max-pages N --json` (a process of its own,
so that its CPU time and memory are measured alone). Scrapy is a bench extra:
`pip install -e '.[bench]'` (make setup installs it).
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

from w3lib.url import canonicalize_url

from infra.settings import Settings


def run_scrapy(seeds: list[str], max_pages: int, max_depth: int, settings: Settings) -> dict:
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    planned: Counter[str] = Counter()
    seen: set[str] = set()

    def within_budget(request, response):
        # The same per-site budget as sourcewatch's frontier: seeds count, then every new URL planned.
        # Links already seen go on to Scrapy's duplicate filter without using up the budget.
        url = canonicalize_url(request.url)
        if url in seen:
            return request
        site = urlsplit(request.url).netloc
        if planned[site] >= max_pages:
            return None
        seen.add(url)
        planned[site] += 1
        return request

    class BenchSpider(CrawlSpider):
        name = "bench"
        start_urls = seeds
        rules = (Rule(LinkExtractor(deny_extensions=[]), callback="parse_page", follow=True,
                      process_request=within_budget),)

        def parse_page(self, response):
            return None

        def parse_start_url(self, response):
            seen.add(canonicalize_url(response.url))
            planned[urlsplit(response.url).netloc] += 1
            return None

    process = CrawlerProcess(settings={
        "USER_AGENT": settings.user_agent,
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": settings.global_concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": settings.per_host_concurrency,
        "DOWNLOAD_DELAY": settings.per_host_delay_seconds,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "DOWNLOAD_TIMEOUT": settings.total_timeout_seconds,
        "DOWNLOAD_MAXSIZE": settings.max_body_bytes,
        "REDIRECT_MAX_TIMES": settings.max_redirects,
        "DEPTH_LIMIT": max_depth,
        "HTTPERROR_ALLOW_ALL": True,  # count error pages like sourcewatch does
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "COOKIES_ENABLED": False,
    })
    crawler = process.create_crawler(BenchSpider)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats.get_stats()
    seconds = (stats["finish_time"] - stats["start_time"]).total_seconds()
    pages = stats.get("downloader/response_count", 0) - stats.get("robotstxt/response_count", 0)
    return {"pages_fetched": pages, "seconds": round(seconds, 3),
            "pages_per_s": round(pages / seconds, 2) if seconds else 0.0}
