"""`sourcewatch worker`: one worker running every agent (or those of a role) until Ctrl-C; start more to scale
out."""

from __future__ import annotations

import argparse
import os

from infra.settings import get_settings
from streams.cli.base import Command, ensure_local_kafka


class Worker(Command):
    name = "worker"
    help = "run a worker with every agent until stopped (Ctrl-C)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--loglevel", default="info", choices=["debug", "info", "warning", "error"])
        parser.add_argument("--role", choices=["all", "process", "sink"],
                            help="all: every stage and the ClickHouse sink (default, SOURCEWATCH_WORKER_ROLE); "
                                 "process: the stages without the sink (start several to scale out); sink: the "
                                 "sink alone (one with the embedded chDB, any number on a ClickHouse server)")

    def run(self, args: argparse.Namespace) -> int:
        if args.role:
            # Read when the Faust app is made (its consumer group and client id depend on it).
            os.environ["SOURCEWATCH_WORKER_ROLE"] = args.role
            get_settings.cache_clear()
        ensure_local_kafka()
        from service.app import add_worker_service
        from streams.worker import run_worker

        settings = get_settings()
        return run_worker(loglevel=args.loglevel, web_routes=lambda web_app: add_worker_service(web_app, settings))
