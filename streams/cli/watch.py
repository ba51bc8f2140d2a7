"""`sourcewatch watch URL…` adds source pages to the revisit watch list (or runs a worker on them for a
while); `sourcewatch watch --status` shows each watched page's live figures and learned rhythm."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

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
from streams.cli.sql import print_table, read_table


def _figures(row: dict, names: tuple[str, ...]) -> str:
    """The figures named, "–" for one not known yet (a page not revisited since its first read has none)."""
    return "  ".join(f"{name} {row[name]:.3f}" if row.get(name) is not None else f"{name} –" for name in names)


def _print_status(rows: list[dict]) -> None:
    """Each watched page on a line of its own, its figures indented below it: a table of URLs and nine columns
    is cut to nothing in a terminal (or a pipe's 80 columns)."""
    from infra.queries import REVISIT_FIGURES

    if not rows:
        print("no watched page has figures yet (a running worker reports them from a page's first read)")
        return
    print(f"{len(rows)} watched pages")
    for row in rows:
        print(row["source"])
        print(f"  {_figures(row, REVISIT_FIGURES)}")
        hours = row.get("known_hours")
        known = "–" if hours is None else f"{hours:.0f} h"
        rate = _figures(row, ("updates_per_day",))
        print(f"  {rate}  known {known}  peaks {row.get('peaks') or '–'}  updated {row.get('updated')}")


class Watch(Command):
    name = "watch"
    help = "add source pages to the revisit watch list, or show their figures"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("urls", nargs="*", metavar="URL", help="source pages to watch")
        parser.add_argument("--sources", metavar="FILE", help="a file of source page URLs, one per line")
        parser.add_argument("--status", action="store_true",
                            help="each watched page's live timeliness, friendliness, delay and fetches per item, "
                                 "and its learned rhythm (updates per day, peak slots, hours known)")
        parser.add_argument("--run", type=float, metavar="SECONDS",
                            help="run a worker here for this long, then print the watched pages' figures")
        parser.add_argument("--target-timeliness", type=float, metavar="T",
                            help="with --run: the timeliness the scheduler aims at across the pages (the operating "
                                 "knob; workers read SOURCEWATCH_REVISIT_TARGET_TIMELINESS)")
        add_allow_loopback(parser)
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from infra.queries import REVISIT_FIGURES, watch_status
        from jobs.watch import add_sources, run_watch, watch_requests

        if args.status:
            columns, rows = read_table(watch_status())
            if args.json:
                return print_table(columns, rows, True)
            _print_status([dict(zip(columns, row)) for row in rows])
            return 0
        if args.target_timeliness is not None:
            if not args.run:
                raise CommandError("--target-timeliness sets the worker this command runs (--run); for your "
                                   "workers set SOURCEWATCH_REVISIT_TARGET_TIMELINESS")
            if not 0 < args.target_timeliness <= 1:
                raise CommandError("--target-timeliness must lie in (0, 1]")
            os.environ["SOURCEWATCH_REVISIT_TARGET_TIMELINESS"] = str(args.target_timeliness)
            get_settings.cache_clear()
        if args.sources and not Path(args.sources).is_file():
            raise CommandError(f"no such file: {args.sources}")
        urls = read_seeds(([args.sources] if args.sources else []) + args.urls)
        if not urls:
            raise CommandError("watch needs --sources FILE or URLs (or --status)")
        try:
            sources = watch_requests(urls)
        except ValueError as error:
            raise CommandError(str(error)) from None
        ensure_local_kafka()
        if not args.run:
            asyncio.run(add_sources(get_settings(), sources))
            print(f"{len(sources)} source pages sent to the watch list; a running `sourcewatch worker` revisits "
                  "them (`sourcewatch watch --status` shows how they do)")
            return 0
        code, summary = run_watch(sources, args.run, show_progress=interactive(args))
        if args.json:
            print_json(summary)
        elif summary:
            print(f"watched {len(sources)} source pages for {summary['seconds']} s: {summary['decisions']} "
                  f"decisions, {summary['fetches']} revisits")
            for row in summary["sources"]:
                print(f"  {row['source']}  {_figures(row, REVISIT_FIGURES)}")
        return code if summary else (code or 1)
