"""`sourcewatch soak`: thousands of watched pages on the simulated web for simulated days, across workers and
through faults, held against the truth (jobs.soak)."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, ensure_local_kafka, note, print_json


class Soak(Command):
    name = "soak"
    help = "watch every source page of a large simulated web for simulated days with N workers (and faults)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--sites", type=int, default=5000, help="simulated sites (default 5000)")
        parser.add_argument("--days", type=float, default=7.0, help="simulated days watched (default 7)")
        parser.add_argument("--workers", type=int, default=1, help="processing workers beside the sink (default 1)")
        parser.add_argument("--faults", action="store_true",
                            help="kill a processing worker and the sink mid-run, restart the local broker, and let "
                                 "a share of sites fail")
        parser.add_argument("--down-seconds", type=float, default=30.0,
                            help="how long a killed worker and the stopped broker stay down (default 30)")
        parser.add_argument("--speed", type=float, default=720.0,
                            help="simulated seconds per real second (default 720: an hourly tick every 5 s)")
        parser.add_argument("--seed", type=int, default=1, help="the simulated web's seed (default 1)")
        parser.add_argument("--discovery-share", type=float, default=0.1, metavar="SHARE",
                            help="the share of sites whose source pages discovery must find from their homepages "
                                 "instead of being seeded into the watch list (default 0.1)")
        parser.add_argument("--keep-topics", action="store_true",
                            help="leave the run's topics on the broker (default: deleted once its figures are read; "
                                 "the figures stay in the run's ClickHouse)")
        parser.add_argument("--run-dir", help="where the run's chDB and worker logs go (default <home>/soak/STAMP)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from jobs.soak import SoakPlan, run_soak

        if args.sites < 1 or args.workers < 1 or args.days <= 0 or args.speed <= 0 or args.down_seconds < 0 \
                or not 0 <= args.discovery_share <= 1:
            raise CommandError("--sites and --workers must be at least 1, --days and --speed above 0, "
                               "--down-seconds not below 0, --discovery-share between 0 and 1")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = Path(args.run_dir) if args.run_dir else get_settings().home / "soak" / stamp
        # The run's own topics and ClickHouse, for this process and the workers it starts.
        os.environ |= {"SOURCEWATCH_TOPIC_PREFIX": f"soak-{stamp}.",
                       "SOURCEWATCH_CLICKHOUSE_DSN": f"chdb://{(run_dir / 'clickhouse').absolute()}",
                       "SOURCEWATCH_ALLOW_LOOPBACK": "true", "SOURCEWATCH_ATTACH_TO_RUNNING_WORKERS": "true"}
        get_settings.cache_clear()
        ensure_local_kafka()
        plan = SoakPlan(args.sites, args.days, args.workers, args.faults, args.speed, args.seed, run_dir,
                        args.down_seconds, args.discovery_share, args.keep_topics)
        try:
            result = run_soak(plan, get_settings(), progress=note)
        except RuntimeError as error:
            raise CommandError(str(error), code=1) from None
        if args.json:
            print_json(result)
        else:
            for key, value in result.items():
                print(f"  {key}: {value}")
        lost = result["duplicates"] or result["watched_lost"] or result["ticks_decided_twice"] or \
            result["missed"].get("read after its publication, not found", 0) or result["politeness"]["exceeded"] or \
            sum(result["not_new"].values())
        return 1 if lost else 0
