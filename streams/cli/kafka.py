"""`sourcewatch kafka start|stop|status`: the local Apache Kafka broker; `topics` and `delete-topics`: the
prefixes on the cluster the settings name, and deleting one (a soak's kept topics, a run that did not end)."""

from __future__ import annotations

import argparse

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, print_json


class Kafka(Command):
    name = "kafka"
    help = "start, stop or inspect the local Kafka broker; list or delete the topics of a prefix"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status", "topics", "delete-topics"],
                            help="topics: sourcewatch's topics on the cluster by prefix (this deployment's, runs' "
                                 "left behind); delete-topics: delete those of --prefix")
        parser.add_argument("--prefix", help="delete-topics: the prefix whose topics go (a run's, e.g. "
                                             "soak-20261207-005500.; not this deployment's own)")
        add_json(parser, "print one JSON object")

    def run(self, args: argparse.Namespace) -> int:
        if args.action in ("topics", "delete-topics"):
            return self._topics(args)
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

    def _topics(self, args: argparse.Namespace) -> int:
        import asyncio

        from aiokafka.errors import KafkaConnectionError

        from infra.kafka_broker import bootstrap_address
        from infra.kafka_topics import by_prefix, delete_topics, prefix_of, topic_partitions

        settings = get_settings()
        bootstrap = bootstrap_address(settings)
        if args.action == "delete-topics" and not args.prefix:
            raise CommandError("delete-topics needs --prefix (`sourcewatch kafka topics` lists them)")
        try:
            partitions = asyncio.run(topic_partitions(bootstrap))
            if args.action == "delete-topics":
                own = [name for name in partitions
                       if name.startswith(args.prefix) and prefix_of(name) == settings.topic_prefix]
                if own:
                    raise CommandError(f"--prefix {args.prefix!r} would take {len(own)} of this deployment's own "
                                       f"topics (SOURCEWATCH_TOPIC_PREFIX {settings.topic_prefix!r}: {own[0]}, …) and "
                                       "its workers' table state with them; refused")
                result: dict = {"prefix": args.prefix, "deleted": asyncio.run(delete_topics(bootstrap, args.prefix))}
            else:
                groups, other = by_prefix(partitions)
                result = {"bootstrap": bootstrap, "this_deployment": settings.topic_prefix,
                          "prefixes": [vars(group) for group in groups], "other_topics": other}
        except KafkaConnectionError as error:
            raise CommandError(f"no Kafka at {bootstrap}: {error} (`sourcewatch kafka start` starts the local one)",
                               code=1) from None
        if args.json:
            print_json(result)
        elif args.action == "delete-topics":
            print(f"{len(result['deleted'])} topics of prefix {args.prefix!r} deleted")
        else:
            for group in result["prefixes"]:
                mark = "  (this deployment)" if group["prefix"] == settings.topic_prefix else ""
                print(f"{group['prefix'] or '(no prefix)':<40} {group['topics']:>4} topics {group['partitions']:>6} "
                      f"partitions{mark}")
            if result["other_topics"]:
                print(f"{len(result['other_topics'])} other topics (not sourcewatch's)")
        return 0
