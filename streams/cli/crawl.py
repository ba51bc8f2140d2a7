"""`sourcewatch crawl` (breadth-first, or `--sources`: listing pages read with their pagination) and
`sourcewatch crawl-snapshots` (site snapshots served on loopback, then crawled)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import (
    Command,
    CommandError,
    add_allow_loopback,
    add_json,
    ensure_local_kafka,
    interactive,
    loopback_crawl_settings,
    print_json,
    read_seeds,
)


def add_budget_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-pages", type=int, help="page budget per site (default: settings.crawl_max_pages)")
    parser.add_argument("--depth", type=int, help="maximum clicks from a seed (default: settings.crawl_max_depth)")
    parser.add_argument("--time-limit", type=float, help="stop after this many seconds even if pages remain")


def crawl_and_report(seeds: list[str], args: argparse.Namespace, sources: bool = False, topic=None) -> int:
    """Crawl in a worker of this process until idle and print its summary; the exit code. With a `topic`,
    each seed's site is crawled by the Q-learning topical frontier."""
    settings = get_settings()
    ensure_local_kafka()
    from jobs.crawl import CrawlPlan, run_crawl
    from schemas.crawl import SEED_REASON, TOPICAL_REASON

    plan = CrawlPlan(
        seeds=seeds,
        max_pages=args.max_pages or settings.crawl_max_pages,
        # A source crawl follows pagination only: the BFS frontier plans nothing beyond the seeds.
        max_depth=0 if sources else (args.depth if args.depth is not None else settings.crawl_max_depth),
        time_limit=args.time_limit,
        reason="source" if sources else TOPICAL_REASON if topic is not None else SEED_REASON,
        topic=topic,
    )
    code, summary = run_crawl(plan, show_progress=interactive(args))
    if args.json:
        print_json(summary)
    elif summary:
        print(f"crawl {summary['crawl_id']}: {summary['pages_fetched']} pages in {summary['seconds']}s "
              f"({summary['pages_per_s']} pages/s), {summary['links_found']} links")
        print(f"  by status: {summary['by_status']}")
        print(f"  errors:    {summary['errors'] or 'none'}")
        print(f"  fetch latency p50/p99: {summary['fetch_ms_p50']} / {summary['fetch_ms_p99']} ms")
        if summary["pages_tagged"]:
            print(f"  pagination: {summary['pages_tagged']} listing pages tagged, "
                  f"{summary['multipage_sources']} multi-page sources")
        if summary["records_read"]:
            print(f"  records: {summary['records_read']} read, {summary['new_items']} new items")
        if "topical" in summary:
            topical = summary["topical"]
            print(f"  topical: {topical['relevant_pages']} of {topical['pages']} pages relevant (harvest rate "
                  f"{topical['harvest_rate']}), {topical['relevant_sites']} of {topical['sites']} sites")
    if summary and not summary["pages_ok"]:
        explain_failed_seeds(summary["seed_errors"])
        return code or 1
    return code if summary else (code or 1)


def explain_failed_seeds(seed_errors: list[dict]) -> None:
    """Say why a crawl read no page at all (on stderr, so --json output stays one document)."""
    print("error: no page could be read; the seeds failed:", file=sys.stderr)
    for failure in seed_errors:
        print(f"  {failure['url']}: {failure['error']} ({failure['detail']})", file=sys.stderr)
    if any(failure["error"] == "blocked_address" for failure in seed_errors):
        print("  loopback and private addresses are refused by default: pass --allow-loopback for a server on "
              "this machine (SOURCEWATCH_ALLOW_LOOPBACK=true), or set SOURCEWATCH_ALLOW_PRIVATE=true for a "
              "private network", file=sys.stderr)


def crawl_topic(args: argparse.Namespace):
    """The topic of `crawl --topical`: --topic's words and --samples' pages (URLs fetched politely, or HTML
    files); None for a crawl that is not topical."""
    if not args.topical:
        if args.topic or args.samples:
            raise CommandError("--topic and --samples describe a topical crawl: add --topical")
        return None
    from models.discovery.topical import topic_of

    pages = read_sample_pages(args.samples or [])
    return topic_of(args.topic.split() if args.topic else (), pages)


def read_sample_pages(samples: list[str]) -> list[str]:
    """The HTML of each sample: a file's text, or a URL fetched with the crawler's own fetcher (robots.txt, the
    address guard, its caps); a sample that cannot be read is an error, not a silently smaller sample."""
    import asyncio

    from agents.fetching.fetcher import Fetcher
    from schemas.crawl import CrawlRequest
    from schemas.sites import site_of

    pages, urls = [], []
    for sample in samples:
        path = Path(sample)
        if path.is_file():
            pages.append(path.read_text(errors="replace"))
        elif site_of(sample):
            urls.append(sample)
        else:
            raise CommandError(f"--samples: {sample!r} is neither a file nor an http(s) URL")

    async def fetch_all() -> list[str]:
        async with Fetcher.from_settings(get_settings()) as fetcher:
            fetched = [await fetcher.fetch(CrawlRequest(site=site_of(url), url=url, crawl_id="samples"))
                       for url in urls]
        failed = [f"{page.url} ({page.error.value} {page.status})" for page in fetched if not page.ok]
        if failed:
            raise CommandError(f"--samples could not be read: {', '.join(failed)}")
        return [page.body for page in fetched]

    return pages + (asyncio.run(fetch_all()) if urls else [])


class Crawl(Command):
    name = "crawl"
    help = ("crawl from seeds through Kafka until idle: breadth-first, listing pages (--sources), or each seed's "
            "site towards a topic (--topical)")

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seeds", nargs="+", required=True, metavar="FILE|URL",
                            help="seed URLs, or files with one URL per line")
        add_budget_options(parser)
        parser.add_argument("--until-idle", action="store_true",
                            help="run until the pipeline is idle (the default; kept for scripts that say so)")
        parser.add_argument("--sources", action="store_true",
                            help="the seeds are source (listing) pages: tag their pagination and follow it "
                                 "(settings.pagination_max_pages per source), no breadth-first crawl")
        parser.add_argument("--topical", action="store_true",
                            help="crawl each seed's site with the Q-learning topical frontier (best expected Q "
                                 "first, up to --max-pages per site) and report its harvest rate")
        parser.add_argument("--topic", metavar="WORDS",
                            help="the topical crawl's keywords (default: event and news words)")
        parser.add_argument("--samples", nargs="+", metavar="URL|FILE",
                            help="sample pages of the topic (URLs or HTML files): pages like them are relevant")
        add_allow_loopback(parser)
        add_json(parser, "print the summary as one JSON object")

    def run(self, args: argparse.Namespace) -> int:
        seeds = read_seeds(args.seeds)
        if not seeds:
            raise CommandError("no seeds given")
        if args.topical and args.sources:
            raise CommandError("--topical and --sources are two kinds of crawl: choose one")
        return crawl_and_report(seeds, args, sources=args.sources, topic=crawl_topic(args))


class CrawlSnapshots(Command):
    name = "crawl-snapshots"
    help = "serve real site snapshots on loopback and crawl them"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("dirs", nargs="+", metavar="DIR", help="a site folder, or a folder of site folders")
        add_budget_options(parser)
        add_json(parser, "print the summary as one JSON object")

    def run(self, args: argparse.Namespace) -> int:
        loopback_crawl_settings()
        from infra.site_server import serving_sites

        dirs = [Path(d) for d in args.dirs]
        missing = [str(d) for d in dirs if not d.is_dir()]
        if missing:
            raise CommandError(f"no site snapshot at {', '.join(missing)}")
        with serving_sites(dirs) as homepages:
            if not args.json:
                print(f"serving {len(homepages)} site(s) on loopback; crawling them through Kafka …")
            return crawl_and_report(list(homepages.values()), args)
