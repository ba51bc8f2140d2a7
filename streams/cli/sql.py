"""`sourcewatch sql "SELECT …"`: a read-only query on ClickHouse, through the worker that holds an
embedded chDB when one does."""

from __future__ import annotations

import argparse

from infra.queries import Query
from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, print_json


def read_table(query: Query | str) -> tuple[list[str], list[list]]:
    """The query's columns and rows; CommandError (exit 1) with the database's own message."""
    from infra.sql_owner import read_clickhouse

    try:
        return read_clickhouse(get_settings(), query)
    except Exception as error:  # the database's message is what the user needs
        raise CommandError(str(error), code=1) from None


def print_table(columns: list[str], rows: list[list], as_json: bool) -> int:
    if as_json:
        print_json([dict(zip(columns, row)) for row in rows])
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(*columns)
    for row in rows:
        table.add_row(*(str(value) for value in row))
    Console().print(table)
    return 0


class Sql(Command):
    name = "sql"
    help = "run a read-only ClickHouse query (tables: fetches, links, records, metrics, …)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("query")
        add_json(parser, "print rows as a JSON list of objects")

    def run(self, args: argparse.Namespace) -> int:
        return print_table(*read_table(args.query), args.json)
