"""`sourcewatch demo`: the main job on the simulated web — Kafka, sites, a worker, ClickHouse."""

from __future__ import annotations

import argparse
import os

from streams.cli.base import Command, add_json, interactive, loopback_crawl_settings, print_json


class Demo(Command):
    name = "demo"
    help = "the main job on a simulated web: Kafka, sites, workers, ClickHouse"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--sites", type=int, default=20, help="simulated sites (default 20)")
        parser.add_argument("--duration", type=float, default=120.0, help="seconds to run (default 120)")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--speed", type=float, default=3600.0, help="simulated seconds per real second")
        parser.add_argument("--watch-days", type=float, default=14.0,
                            help="simulated days the revisit model watches the source pages found (default 14; "
                                 "0 skips it)")
        parser.add_argument("--watch-speed", type=float, default=7200.0,
                            help="simulated seconds per real second while watching (default 7200: 14 days in "
                                 "under 3 minutes)")
        parser.add_argument("--serve", action="store_true",
                            help="then serve the dashboard, API and feeds of what it stored until Ctrl-C")
        add_json(parser, "print the summary as one JSON object")

    def run(self, args: argparse.Namespace) -> int:
        # The demo's phases run workers of their own on its simulated web, never on a user's running workers.
        os.environ["SOURCEWATCH_ATTACH_TO_RUNNING_WORKERS"] = "false"
        loopback_crawl_settings()
        from jobs.demo import DemoPlan, print_summary, run_demo

        summary = run_demo(DemoPlan(sites=args.sites, seed=args.seed, duration=args.duration, speed=args.speed,
                                    watch_days=args.watch_days, watch_speed=args.watch_speed),
                           show_progress=interactive(args))
        print_json(summary) if args.json else print_summary(summary)
        code = 0 if summary.get("pages_fetched") else 1
        if not args.serve:
            if not args.json:
                print("\nsee it on the dashboard: sourcewatch serve")
            return code
        from streams.cli.serving import Serve

        return Serve().run(argparse.Namespace(host=None, port=None, json=args.json)) or code
