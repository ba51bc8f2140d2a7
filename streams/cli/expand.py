"""`sourcewatch eval expand`: domain discovery's ranking (DWDBRM's CombinedF and its single rankers) on real
pages — how high the other source pages come, given a few samples."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, print_json


class EvalExpand(Command):
    name = "expand"
    help = "domain discovery's rankers on real pages: P@10/20/35 and ranks of source pages given K samples"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--pages", nargs="+", metavar="DIR",
                            help="site folders laid out like <data>/sites, indexed and ranked (default: "
                                 "<data>/sites); relevant = the source pages their manifests mark")
        parser.add_argument("--records", metavar="DIR",
                            help="a records data folder indexed beside them (default: <data>/records — City "
                                 "Scrapers' listings relevant, Estuka's result lists not)")
        parser.add_argument("--no-records", action="store_true", help="index the site folders alone")
        parser.add_argument("--samples", type=int, default=10, metavar="K",
                            help="sample source pages per draw (default 10)")
        parser.add_argument("--draws", type=int, default=5, help="draws of samples, figures averaged (default 5)")
        parser.add_argument("--seed", type=int, default=0, help="the draws' seed (default 0)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.expansion.evaluation import CUTOFFS, NoPages, evaluate_expand
        from models.expansion.ranking import RANKERS

        if args.samples < 1 or args.draws < 1:
            raise CommandError("--samples and --draws must be at least 1")
        data = get_settings().data
        folders = [Path(folder) for folder in args.pages or [data / "sites"]]
        records = None if args.no_records else Path(args.records) if args.records else data / "records"
        missing = [str(path) for path in [*folders, *([records] if records else [])] if not path.is_dir()]
        if missing:
            raise CommandError(f"no such folder: {', '.join(missing)} (unpack the data with `make setup`)")
        try:
            result = evaluate_expand(folders, records, args.samples, args.draws, args.seed,
                                     progress=lambda line: print(f"  {line}", file=sys.stderr))
        except NoPages as error:
            raise CommandError(str(error)) from None
        if args.json:
            print_json(result)
            return 0
        print(f"{result['pages']} pages ({result['relevant']} relevant, {result['links']} links); {result['protocol']}")
        for name in ("combined", *RANKERS):
            figures = result[name]
            print(f"  {name:<9} " + ", ".join(f"P@{n} {figures[f'p_at_{n}']}" for n in CUTOFFS)
                  + f", mean rank {figures['mean_rank']}, median rank {figures['median_rank']}")
        return 0
