"""`sourcewatch records SOURCE_URL` (the current records of a source page, from ClickHouse) and
`sourcewatch eval records` (record extraction on labelled data, beside the sibling-group baseline), and
`sourcewatch train records` (the list ranker)."""

from __future__ import annotations

import argparse
from pathlib import Path

from streams.cli.base import Command, CommandError, add_json, print_json, progress_bar
from streams.cli.sql import read_table
from streams.heap import freeze_loaded


class Records(Command):
    name = "records"
    help = "print the current records of a source page (from ClickHouse)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("source", metavar="SOURCE_URL", help="the source page's URL, as crawled")
        parser.add_argument("--limit", type=int, default=500, help="at most this many records (default 500)")
        add_json(parser, "print rows as a JSON list of objects")

    def run(self, args: argparse.Namespace) -> int:
        from infra.queries import no_list_of_source, records_of_source
        from models.records.no_list import DESCRIPTIONS
        from models.records.report import current_records

        columns, rows = read_table(records_of_source(args.source, args.limit))
        records = [dict(zip(columns, row)) for row in rows]
        if args.json:
            print_json(records)
            return 0
        _, read = read_table(no_list_of_source(args.source))
        no_list = read[0][0] if read else None
        if not records:
            print(f"no records of {args.source}: its last read showed no list — {DESCRIPTIONS[no_list]}" if no_list
                  else f"no records of {args.source} yet (is it a source page that was crawled with --sources?)")
            return 1
        print(f"{args.source}: {len(records)} records")
        if no_list:
            print(f"  (its last read showed no list of its own — {DESCRIPTIONS[no_list]})")
        print("\n".join(current_records(records)))
        return 0


class TrainRecords(Command):
    name = "records"
    help = ("train the list ranker (which candidate record set is a page's main list) on the Estuka testbed "
            "and City Scrapers")

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data", required=True, metavar="DIR",
                            help="<data>/records (both data sets), or one: <data>/records/estuka, …/city-scrapers")
        parser.add_argument("--out", required=True, help="ranker file to write")

    def run(self, args: argparse.Namespace) -> int:
        from models.records.report import NoRecordData, train_records_ranker

        try:
            ranker = train_records_ranker(Path(args.data), progress_bar)
        except NoRecordData as error:
            raise CommandError(str(error)) from None
        ranker.save(Path(args.out))
        print(f"trained on {ranker.trained_on['pages']} pages of {len(ranker.trained_on['folds'])} folds "
              f"(Estuka categories, City Scrapers site groups) → {args.out}")
        return 0


class EvalRecords(Command):
    name = "records"
    help = ("record extraction on the Estuka testbed and City Scrapers (cross-validated together) or the site "
            "snapshots (told by the folder)")

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data", required=True, metavar="DIR",
                            help="<data>/records (Estuka and City Scrapers), one of them (<data>/records/estuka, "
                                 "…/city-scrapers) or <data>/sites")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.records.report import NoRecordData, evaluate_records, print_evaluation

        freeze_loaded()  # as a worker does once its agents are imported (its timing figures are a worker's)
        try:
            result = evaluate_records(Path(args.data), progress_bar)
        except NoRecordData as error:
            raise CommandError(str(error)) from None
        print_json(result) if args.json else print_evaluation(result)
        return 0
