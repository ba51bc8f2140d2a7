"""`sourcewatch bench KIND`: the pipeline against its own fetch path and Scrapy, and each model's throughput."""

from __future__ import annotations

import argparse
import asyncio
import sys

from infra.settings import get_settings
from streams.cli.base import (
    Command,
    CommandError,
    add_json,
    ensure_local_kafka,
    loopback_crawl_settings,
    print_json,
    read_seeds,
)
from streams.cli.discovery import BenchDiscovery
from streams.cli.pagination import BenchTag
from streams.cli.revisit import BenchRevisit


class BenchCrawl(Command):
    name = "crawl"
    help = "the pipeline vs its fetch+parse path vs Scrapy on the same sites (the side-by-side table)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--sites", type=int, default=30, help="simulated sites (default 30)")
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--runs", type=int, default=3, help="runs per configuration (default 3)")
        parser.add_argument("--max-pages", type=int, default=200, help="page budget per site (default 200)")
        parser.add_argument("--no-snapshots", action="store_true", help="leave out <data>/sites")
        parser.add_argument("--workers", type=int, default=0,
                            help="run the pipeline on a sink worker and this many processing workers started "
                                 "for each run, the crawl beside them (default 0: the crawl's own worker)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from jobs.bench_crawl import bench_crawl, print_table

        if args.workers < 0:
            raise CommandError("--workers must be 0 or more")
        ensure_local_kafka()
        snapshots = None if args.no_snapshots else get_settings().data / "sites"
        report = bench_crawl(args.sites, args.seed, args.runs, args.max_pages, snapshots,
                             progress=(lambda line: print(line, file=sys.stderr)), workers=args.workers)
        print_json(report) if args.json else print_table(report)
        return 0


class BenchOneCrawler(Command):
    """One run of one crawler alone on the seeds."""

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seeds", nargs="+", required=True, metavar="FILE|URL", help="seeds")
        parser.add_argument("--max-pages", type=int, default=200, help="page budget per site (default 200)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        seeds = read_seeds(args.seeds)
        if not seeds:
            raise CommandError(f"bench {self.name} needs --seeds")
        loopback_crawl_settings()
        from jobs.crawl import CrawlPlan

        settings = get_settings()
        result = self.crawl(CrawlPlan(seeds, args.max_pages, settings.crawl_max_depth), settings)
        print_json(result) if args.json else print(result)
        return 0


class BenchFetchParse(BenchOneCrawler):
    name = "fetch-parse"
    help = "one run of the pipeline's own fetch+parse path alone, without Kafka"

    def crawl(self, plan, settings) -> dict:
        from jobs.bench_crawl import crawl_without_kafka

        return asyncio.run(crawl_without_kafka(plan, settings))


class BenchScrapy(BenchOneCrawler):
    name = "scrapy"
    help = "one run of Scrapy alone, under the same politeness"

    def crawl(self, plan, settings) -> dict:
        from jobs.bench_scrapy import run_scrapy

        return run_scrapy(plan.seeds, plan.max_pages, plan.max_depth, settings)


class BenchService(Command):
    name = "service"
    help = "`sourcewatch serve`'s latency per route and the dashboard's first paint, on a store of synthetic rows"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--sources", type=int, default=5000, help="source pages (default 5,000)")
        parser.add_argument("--records", type=int, default=1_000_000, help="records (default 1,000,000)")
        parser.add_argument("--items", type=int, default=100_000, help="new items (default 100,000)")
        parser.add_argument("--requests", type=int, default=50, help="timed requests per route (default 50)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from service.bench import bench_service, print_report

        ensure_local_kafka()
        report = bench_service(args.sources, args.records, args.items, args.requests,
                               progress=lambda line: print(line, file=sys.stderr))
        print_json(report) if args.json else print_report(report)
        return 0


class Bench(Command):
    name = "bench"
    help = ("benchmarks: `bench crawl` compares the pipeline with Scrapy; tag, revisit, discovery: model "
            "throughput; service: the API's latency")
    subcommands = (BenchCrawl, BenchFetchParse, BenchScrapy, BenchTag, BenchRevisit, BenchDiscovery, BenchService)
