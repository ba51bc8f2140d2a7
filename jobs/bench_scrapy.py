"""The Scrapy side of `sourcewatch bench crawl`: a minimal CrawlSpider with our politeness and page budget.

Run as `sourcewatch bench scrapy --seeds URL… --max-pages N --json` (a process of its own,
so that its CPU time and memory are measured alone). Scrapy is a bench extra:
`pip install -e '.[bench]'` (make setup installs it).
"""

from __future__ import annotations

from collections import Counter

from w3lib.url import canonicalize_url

from infra.settings import Settings
from schemas.sites import site_of


def run_scrapy(seeds: list[str], max_pages: int, max_depth: int, settings: Settings) -> dict:
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    planned: Counter[str] = Counter()
    seen: set[str] = set()
    seed_sites = {site_of(seed) for seed in seeds}

    def within_budget(request, response):
        # The same rules as sourcewatch's frontier: only links within a seed's site (keyed the same
        # way), seeds count against the per-site budget, then every new URL planned. Links already
        # seen go on to Scrapy's duplicate filter without using up the budget.
        url = canonicalize_url(request.url)
        if url in seen:
            return request
        site = site_of(url)
        if site not in seed_sites or planned[site] >= max_pages:
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
            planned[site_of(response.url)] += 1
            return None

    process = CrawlerProcess(settings={
        "USER_AGENT": settings.user_agent,
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": settings.global_concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": settings.per_host_concurrency,
        "DOWNLOAD_DELAY": settings.per_host_delay_seconds,
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
