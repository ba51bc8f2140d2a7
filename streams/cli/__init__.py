"""`sourcewatch`: the one command line of the project (`sourcewatch COMMAND --help` for each)."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from infra.settings import get_settings
from streams.cli import (
    bench,
    crawl,
    demo,
    discover,
    fuzz,
    evaluate,
    expand,
    kafka,
    records,
    replay,
    resend,
    retrain,
    serving,
    soak,
    sql,
    tag,
    train,
    watch,
    worker,
)
from streams.cli.base import CommandError
from streams.heap import collect_less_often
from streams.threads import threads_for_small_models

COMMANDS = (
    kafka.Kafka, worker.Worker, crawl.Crawl, discover.Discover, expand.Expand, demo.Demo, crawl.CrawlSnapshots,
    serving.Simweb, bench.Bench, train.Train, evaluate.Evaluate, retrain.Retrain, tag.Tag, sql.Sql, watch.Watch,
    records.Records, replay.Replay, resend.Resend, serving.ServeSites, serving.Serve, fuzz.Fuzz, soak.Soak,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sourcewatch", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    commands = parser.add_subparsers(dest="command_name", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command().register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    collect_less_often()
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.ERROR)
    if getattr(args, "allow_loopback", False):
        # Settings are read once, on first use: set it before anything reads them.
        os.environ["SOURCEWATCH_ALLOW_LOOPBACK"] = "true"
        get_settings.cache_clear()
    if args.command.small_models:
        threads_for_small_models()
    try:
        return args.command.run(args) or 0
    except CommandError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.code
    except BrokenPipeError:
        # The reader left (`sourcewatch records URL | head`): no traceback, and nothing more written to the
        # closed pipe when Python flushes stdout on exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
