"""`sourcewatch eval topical`: crawl policies inside each site (the Q-learning topical crawl against BFS,
DFS, the keyword heuristic and the RL agent), their harvest rate at several fetch budgets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streams.cli.base import Command, CommandError, add_json, print_json
from streams.cli.discovery import add_sites


class EvalTopical(Command):
    name = "topical"
    help = "crawl policies inside each labelled site (or the simulated web): harvest rate at fetch budgets"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        from models.discovery.topical_evaluation import BUDGETS, POLICIES

        add_sites(parser, required=False)
        parser.add_argument("--simweb", type=int, metavar="N", help="crawl N sites of the simulated web instead")
        parser.add_argument("--simweb-seed", type=int, default=7, help="the simulated web's seed (default 7)")
        parser.add_argument("--budget", type=int, nargs="+", default=list(BUDGETS), metavar="N",
                            help="fetches per site to report at (default 25 50 100 200; the headline is the "
                                 "second)")
        parser.add_argument("--policy", nargs="+", choices=POLICIES, default=list(POLICIES), metavar="NAME",
                            help=f"policies to run (default: {' '.join(POLICIES)})")
        parser.add_argument("--topic", metavar="WORDS",
                            help="the topic's keywords (default: the event/news words the keyword heuristic uses)")
        parser.add_argument("--never-stop", action="store_true",
                            help="a policy that would stop goes on breadth-first, so every policy spends the budget")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.discovery.topical import topic_of
        from models.discovery.topical_evaluation import NoSites, evaluate_topical

        if not args.sites and not args.simweb:
            raise CommandError("eval topical needs --sites DIR… or --simweb N")
        if any(budget < 1 for budget in args.budget):
            raise CommandError("--budget: fetches per site must be at least 1")
        budgets = sorted(set(args.budget))
        try:
            result = evaluate_topical([Path(folder) for folder in args.sites or []], args.policy, budgets,
                                      (args.simweb, args.simweb_seed) if args.simweb else None,
                                      topic_of(args.topic.split()) if args.topic else None, args.never_stop,
                                      progress=lambda line: print(f"  {line}", file=sys.stderr))
        except (NoSites, FileNotFoundError) as error:
            raise CommandError(str(error)) from None
        if args.json:
            print_json(result)
            return 0
        print(result["protocol"])
        for name in args.policy:
            row = ", ".join(f"{budget}: {figures['harvest_rate']} / {figures['harvest_rate_sites']} "
                            f"(recall {figures['recall']})" for budget, figures in result[name]["budgets"].items())
            print(f"  {name:<10} harvest rate pages / sites at {row}")
        return 0
