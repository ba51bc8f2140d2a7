"""`sourcewatch replay TOPIC --out FILE`: a topic exported to JSONL or Parquet for offline training."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from streams.cli.base import Command, add_json, ensure_local_kafka, print_json


class Replay(Command):
    name = "replay"
    help = "export a topic to JSONL or Parquet for offline training"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("topic", help="registry topic name, e.g. pages.fetched")
        parser.add_argument("--from-beginning", action="store_true",
                            help="export everything retained (default: continue after the group's last export)")
        parser.add_argument("--group", default="sourcewatch-replay", help="consumer group that remembers exports")
        parser.add_argument("--out", required=True, help="output file, .jsonl or .parquet")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from jobs.replay import replay_topic

        ensure_local_kafka()
        result = asyncio.run(replay_topic(args.topic, Path(args.out), args.from_beginning, args.group,
                                          show_progress=sys.stderr.isatty()))
        print_json(result) if args.json else print(
            f"{result['exported']} messages of {args.topic} → {args.out} ({result['invalid']} invalid skipped)")
        return 0
