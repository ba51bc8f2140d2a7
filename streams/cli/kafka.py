"""`sourcewatch kafka start|stop|status`: the local Apache Kafka broker."""

from __future__ import annotations

import argparse

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, print_json


class Kafka(Command):
    name = "kafka"
    help = "start, stop or inspect the local Kafka broker"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status"])
        add_json(parser, "print one JSON object")

    def run(self, args: argparse.Namespace) -> int:
        from infra.kafka_broker import KafkaSetupError, LocalKafka

        broker = LocalKafka.from_settings(get_settings())
        if args.action == "start":
            try:
                state = broker.start()
            except KafkaSetupError as error:
                raise CommandError(str(error), code=1) from None
            result = {"running": True, "pid": state.pid, "bootstrap": state.bootstrap,
                      "started_in_seconds": state.started_in_seconds}
        elif args.action == "stop":
            result = {"stopped": broker.stop()}
        else:
            state = broker.state()
            result = {"running": state is not None, "bootstrap": state.bootstrap if state else None,
                      "pid": state.pid if state else None, "data": str(broker.data_dir)}
        if args.json:
            print_json(result)
        else:
            print(" ".join(f"{key}={value}" for key, value in result.items()))
        return 0
