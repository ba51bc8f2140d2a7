"""`sourcewatch worker`: one worker running every agent until Ctrl-C; start more to scale out."""

from __future__ import annotations

import argparse

from streams.cli.base import Command, ensure_local_kafka


class Worker(Command):
    name = "worker"
    help = "run a worker with every agent until stopped (Ctrl-C)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--loglevel", default="info", choices=["debug", "info", "warning", "error"])

    def run(self, args: argparse.Namespace) -> int:
        ensure_local_kafka()
        from streams.worker import run_worker

        return run_worker(loglevel=args.loglevel)
