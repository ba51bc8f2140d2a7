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


def crawl_and_report(seeds: list[str], args: argparse.Namespace, sources: bool = False) -> int:
    """Crawl in a worker of this process until idle and print its summary; the exit code."""
    settings = get_settings()
    ensure_local_kafka()
    from jobs.crawl import CrawlPlan, run_crawl

    plan = CrawlPlan(
        seeds=seeds,
        max_pages=args.max_pages or settings.crawl_max_pages,
        # A source crawl follows pagination only: the BFS frontier plans nothing beyond the seeds.
        max_depth=0 if sources else (args.depth if args.depth is not None else settings.crawl_max_depth),
        time_limit=args.time_limit,
        reason="source" if sources else "seed",
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


class Crawl(Command):
    name = "crawl"
    help = "crawl from seeds breadth-first through Kafka until idle"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seeds", nargs="+", required=True, metavar="FILE|URL",
                            help="seed URLs, or files with one URL per line")
        add_budget_options(parser)
        parser.add_argument("--until-idle", action="store_true",
                            help="run until the pipeline is idle (the default; kept for scripts that say so)")
        parser.add_argument("--sources", action="store_true",
                            help="the seeds are source (listing) pages: tag their pagination and follow it "
                                 "(settings.pagination_max_pages per source), no breadth-first crawl")
        add_allow_loopback(parser)
        add_json(parser, "print the summary as one JSON object")

    def run(self, args: argparse.Namespace) -> int:
        seeds = read_seeds(args.seeds)
        if not seeds:
            raise CommandError("no seeds given")
        return crawl_and_report(seeds, args, sources=args.sources)


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
