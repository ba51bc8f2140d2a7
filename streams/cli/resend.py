"""`sourcewatch resend`: the messages agents failed to handle, sent again to their topics (jobs.resend)."""

from __future__ import annotations

import argparse
import asyncio

from streams.cli.base import Command, add_json, ensure_local_kafka, print_json


class Resend(Command):
    name = "resend"
    help = "send the messages agents failed to handle (their dead letters) again to their topics"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--stage", help="only what this agent failed on, e.g. extract_records (default: all)")
        parser.add_argument("--from-beginning", action="store_true",
                            help="every failed message the dead-letter topic retains (default: those dead-lettered "
                                 "after the group's last resend)")
        parser.add_argument("--group", default="sourcewatch-resend",
                            help="consumer group that remembers which dead letters were read")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from jobs.resend import resend_failed

        ensure_local_kafka()
        result = asyncio.run(resend_failed(args.stage, args.from_beginning, args.group))
        if args.json:
            print_json(result)
        else:
            stages = ", ".join(f"{stage} {count}" for stage, count in result["stages"].items()) or "none"
            print(f"{result['resent']} messages resent from {result['dead_letters']} dead letters of failed "
                  f"batches (by stage: {stages}); {len(result['gone'])} no longer in their topics")
        return 0
