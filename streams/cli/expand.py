"""`sourcewatch expand` (domain discovery over the local page index) and `sourcewatch eval expand` (its
rankers — DWDBRM's CombinedF and each single one — on real pages: how high the other source pages come, given
a few samples)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import (
    Command,
    CommandError,
    add_allow_loopback,
    add_json,
    ensure_local_kafka,
    print_json,
    read_seeds,
)


def _evaluated(args: argparse.Namespace, refused: type[Exception],
               evaluate: Callable[[Callable[[str], None]], dict]) -> dict | None:
    """An evaluation run with its progress on stderr, `refused` errors told as the command's; under --json the
    result is printed here and None returned."""
    try:
        result = evaluate(lambda line: print(f"  {line}", file=sys.stderr))
    except refused as error:
        raise CommandError(str(error)) from None
    if args.json:
        print_json(result)
        return None
    return result


class EvalExpand(Command):
    name = "expand"
    help = "domain discovery's rankers on real pages: P@10/20/35 and ranks of source pages given K samples"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--pages", nargs="+", metavar="DIR",
                            help="site folders laid out like <data>/sites, indexed and ranked (default: "
                                 "<data>/sites); relevant = the source pages their manifests mark")
        parser.add_argument("--records", metavar="DIR",
                            help="a records data folder indexed beside them (default: <data>/records — City "
                                 "Scrapers' listings relevant, Estuka's result lists not)")
        parser.add_argument("--no-records", action="store_true", help="index the site folders alone")
        parser.add_argument("--samples", type=int, default=10, metavar="K",
                            help="sample source pages per draw (default 10)")
        parser.add_argument("--draws", type=int, default=5, help="draws of samples, figures averaged (default 5)")
        parser.add_argument("--seed", type=int, default=0, help="the draws' seed (default 0)")
        parser.add_argument("--simweb", type=int, metavar="N",
                            help="instead: the rounds on a simulated internet of N sites — the bandit against "
                                 "each single operator, a round-robin and a BFS over the link graph")
        parser.add_argument("--simweb-seed", type=int, default=7, help="the simulated internet's seed (default 7)")
        parser.add_argument("--budget", type=int, default=300, metavar="PAGES",
                            help="with --simweb: pages found per method and draw (default 300)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.expansion.evaluation import CUTOFFS, NoPages, evaluate_expand
        from models.expansion.ranking import RANKERS

        if args.samples < 1 or args.draws < 1:
            raise CommandError("--samples and --draws must be at least 1")
        if args.simweb is not None:
            return self.run_simweb(args)
        data = get_settings().data
        folders = [Path(folder) for folder in args.pages or [data / "sites"]]
        records = None if args.no_records else Path(args.records) if args.records else data / "records"
        missing = [str(path) for path in [*folders, *([records] if records else [])] if not path.is_dir()]
        if missing:
            raise CommandError(f"no such folder: {', '.join(missing)} (unpack the data with `make setup`)")
        result = _evaluated(args, NoPages, lambda progress: evaluate_expand(
            folders, records, args.samples, args.draws, args.seed, progress=progress))
        if result is None:
            return 0
        print(f"{result['pages']} pages ({result['relevant']} relevant, {result['links']} links); {result['protocol']}")
        for name in ("combined", *RANKERS):
            figures = result[name]
            print(f"  {name:<9} " + ", ".join(f"P@{n} {figures[f'p_at_{n}']}" for n in CUTOFFS)
                  + f", mean rank {figures['mean_rank']}, median rank {figures['median_rank']}")
        return 0

    @staticmethod
    def run_simweb(args: argparse.Namespace) -> int:
        from models.expansion.simulated import evaluate_simweb

        if args.simweb < 20 or args.budget < 1:
            raise CommandError("--simweb needs at least 20 sites and --budget at least 1 page")
        result = _evaluated(args, ValueError, lambda progress: evaluate_simweb(
            args.simweb, args.simweb_seed, args.samples, args.budget, progress=progress))
        if result is None:
            return 0
        print(result["protocol"])
        print(f"  {'method':<12} {'pages':>6} {'sites':>6} {'relevant':>8}  harvest (pages)  harvest (sites)"
              "  relevant sites / 100 pages")
        for method, figures in result["operators"].items():
            print(f"  {method:<12} {figures['pages']:>6.0f} {figures['sites']:>6.1f} {figures['relevant_sites']:>8.2f}"
                  f"  {figures['harvest_rate']:>15.3f}  {figures['harvest_rate_sites']:>15.3f}"
                  f"  {figures['relevant_sites_per_100_pages']:>26.2f}")
        return 0


class Expand(Command):
    name = "expand"
    help = ("domain discovery (DWDBRM): from sample pages of a domain, find more sites like them in the local "
            "page index; --discover hands them to discovery, reading and watching")

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--samples", nargs="+", required=True, metavar="URL|FILE",
                            help="sample pages of the domain (already fetched: in the page index), or files of them")
        parser.add_argument("--budget", type=int, default=200, metavar="PAGES",
                            help="stop once this many pages are found (default 200)")
        parser.add_argument("--sites", type=int, default=20, metavar="N",
                            help="the best-ranked found sites to report and hand on (default 20)")
        parser.add_argument("--discover", action="store_true",
                            help="run discovery through Kafka on the found sites' homepages (then reading and "
                                 "watching, as `sourcewatch discover` does)")
        parser.add_argument("--searxng", metavar="URL",
                            help="a SearXNG instance (JSON format enabled) that keyword search also asks; its "
                                 "results are fetched and indexed (default: settings.searxng_url; '' for none)")
        parser.add_argument("--max-clicks", type=int, help="discovery's click budget per site (with --discover)")
        parser.add_argument("--time-limit", type=float, help="stop discovery after this many seconds")
        add_allow_loopback(parser)
        add_json(parser, "print the summary as one JSON object")

    def run(self, args: argparse.Namespace) -> int:
        from jobs.expand import NotIndexed, expand, send_rounds
        from streams.cli.discover import print_episodes, run_discovery

        samples = read_seeds(args.samples)
        if not samples:
            raise CommandError("no samples given")
        if args.budget < 1 or args.sites < 1:
            raise CommandError("--budget and --sites must be at least 1")
        settings = get_settings()
        try:
            expansion, rounds = expand(settings, samples, args.budget, args.searxng)
        except NotIndexed as error:
            raise CommandError(str(error)) from None
        ensure_local_kafka()
        send_rounds(settings, rounds)
        homepages = expansion.homepages()[: args.sites]
        summary = {"expansion_id": rounds[0].expansion_id if rounds else None, "end": expansion.end,
                   "pages_found": len(expansion.found), "pages_fetched": expansion.fetched,
                   "web_searches": expansion.web_searches, "notes": expansion.notes, "sites": homepages,
                   "rounds": [{"round": r.round, "operator": r.operator, "returned": r.returned,
                               "new": len(r.new_pages), "reward": r.reward} for r in rounds]}
        code = 0
        if args.discover and homepages:
            code, summary["discovery"] = run_discovery(homepages, args)
        if args.json:
            print_json(summary)
            return code
        print(f"{len(rounds)} rounds, {summary['pages_found']} pages found ({expansion.end}); "
              f"{expansion.fetched} pages fetched past the index, {expansion.web_searches} web searches")
        for note in expansion.notes:
            print(f"  note: {note}")
        for r in summary["rounds"]:
            print(f"  round {r['round']:>3}  {r['operator']:<8} {r['new']:>4} new of {r['returned']:>4}  "
                  f"reward {r['reward']}")
        print("sites found, best first:" if homepages else "no site found beyond the samples'")
        for homepage in homepages:
            print(f"  {homepage}")
        if "discovery" in summary:
            print_episodes(summary["discovery"], len(homepages))
        return code
