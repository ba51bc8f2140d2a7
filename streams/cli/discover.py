"""`sourcewatch discover URL…`: one discovery episode per homepage through Kafka, then the finds read and
watched."""

from __future__ import annotations

import argparse

from infra.settings import get_settings
from streams.cli.base import (
    Command,
    CommandError,
    add_allow_loopback,
    add_json,
    ensure_local_kafka,
    interactive,
    print_json,
    read_seeds,
)


class Discover(Command):
    name = "discover"
    help = ("from homepages, find each site's event/news listing page with the discovery agent (through Kafka), "
            "then read and watch it")

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("urls", nargs="*", metavar="URL", help="homepages")
        parser.add_argument("--homepages", metavar="FILE", help="a file of homepage URLs, one per line")
        parser.add_argument("--max-clicks", type=int,
                            help="click budget per site (default: settings.discovery_max_clicks, 10)")
        parser.add_argument("--time-limit", type=float, help="stop after this many seconds even if episodes remain")
        add_allow_loopback(parser)
        add_json(parser, "print the summary as one JSON object")

    def run(self, args: argparse.Namespace) -> int:
        from schemas.sites import site_of

        seeds = read_seeds(([args.homepages] if args.homepages else []) + args.urls)
        if not seeds:
            raise CommandError("discover needs homepage URLs (or --homepages FILE)")
        invalid = [seed for seed in seeds if not site_of(seed.strip())]
        if invalid:
            raise CommandError(f"not an absolute http(s) URL (nor a file of them): {', '.join(invalid)}")
        code, summary = run_discovery(seeds, args)
        if args.json:
            print_json(summary)
        elif summary:
            print_episodes(summary, len(seeds))
        return code if summary else (code or 1)


def run_discovery(seeds: list[str], args: argparse.Namespace) -> tuple[int, dict]:
    """One discovery episode per homepage through Kafka (args: max_clicks, time_limit): (exit code, summary)."""
    from jobs.crawl import CrawlPlan, run_crawl
    from models.model_files import ModelVersionError
    from schemas.discovery import DISCOVER_REASON

    try:
        # Loaded here, once for the worker this process runs, so a missing or stale file stops before it starts.
        from agents.discover import models

        models()
    except (FileNotFoundError, ModelVersionError) as error:
        raise CommandError(str(error)) from None
    ensure_local_kafka()
    clicks = args.max_clicks or get_settings().discovery_max_clicks
    plan = CrawlPlan(seeds=seeds, max_pages=clicks + 1, max_depth=clicks, time_limit=args.time_limit,
                     reason=DISCOVER_REASON)
    return run_crawl(plan, show_progress=interactive(args))


def print_episodes(summary: dict, seeds: int) -> None:
    episodes = summary.get("episodes", [])
    found = [url for episode in episodes for url in episode["found"]]
    clicks_spent = sum(episode["clicks"] for episode in episodes)
    print(f"{len(episodes)} of {seeds} episodes ended in {summary.get('seconds')} s: {len(found)} source "
          f"pages found with {clicks_spent} clicks" + (f" ({clicks_spent / len(found):.2f} per source page)"
                                                        if found else ""))
    if summary.get("stalled"):
        print("  stopped waiting for the rest: the running workers had handled all that was queued and fetched "
              "nothing more for this crawl in a minute (a worker gone? its log says); episodes that end later are "
              "still watched and shown on the dashboard")
    scores, sure_at = summary.get("find_scores", {}), get_settings().find_sure_at
    for episode in episodes:
        clicks = f"{episode['clicks']} click{'s' * (episode['clicks'] != 1)}"
        finds = [f"{url} (P {scores[url]:.2f}{': unsure, to check' if scores[url] < sure_at else ''})"
                 if url in scores else url for url in episode["found"]]
        print(f"  {episode['homepage']}  {episode['end']} after {clicks}  {' '.join(finds) or episode['reason']}")
    if summary.get("records_read"):
        print(f"  records read from the source pages found: {summary['records_read']}")
    gave_up = sum(1 for episode in episodes if episode["end"] in ("stop", "budget") and not episode["found"])
    if gave_up:
        print(f"  {gave_up} site{'s' * (gave_up != 1)} given up on: where you know a listing page there (or that "
              "there is none), say so on the dashboard (`sourcewatch serve`) or with POST /api/v1/sites/verdict — "
              "the page is then watched, and `sourcewatch retrain discovery` learns from it")
