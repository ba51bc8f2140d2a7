"""`sourcewatch retrain revisit|classifier|discovery`: a model retrained on what the live system learned, replayed
from Kafka (the revisit model on the scheduler's observations; the source-page classifier on people's verdicts
on found pages; discovery — that classifier and the stopping model — on their verdicts on found pages and on
sites), swapped in only if it does better."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, ensure_local_kafka, note, print_json
from streams.cli.revisit import load_current_model

GROUP = "sourcewatch-retrain"


class Retrain(Command):
    name = "retrain"
    small_models = True
    help = "retrain a model on what the live system observed (replayed from Kafka), and swap it in only if better"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("task", choices=["revisit", "classifier", "discovery"],
                            help="revisit: on the watched pages' revisit outcomes; classifier: on the verdicts "
                                 "people gave on found sources (POST /api/v1/sources/{id}/verdict); discovery: "
                                 "that classifier, and the stopping model on the discovery episodes' choices "
                                 "labelled by people's verdicts on sites (POST /api/v1/sites/verdict) and finds")
        parser.add_argument("--target", type=float, default=0.95,
                            help="revisit: timeliness the threshold must reach on validation (default 0.95)")
        parser.add_argument("--sites", nargs="+", metavar="DIR",
                            help="classifier, discovery: the labelled sites the classifier is trained on (default "
                                 "<data>/sites)")
        parser.add_argument("--folds", type=int, default=5,
                            help="classifier, discovery: site-grouped folds (default 5)")
        parser.add_argument("--dry-run", action="store_true", help="compare, but keep the current model")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        ensure_local_kafka()
        return {"revisit": _retrain_revisit, "classifier": _retrain_classifier,
                "discovery": _retrain_discovery}[args.task](args)


def _retrain_revisit(args: argparse.Namespace) -> int:
    from agents.revisit import RevisitClock, retrained_path
    from jobs.replay import read_topic
    from jobs.retrain_revisit import observed_series, retrain
    from models.revisit.training import TargetNotReached

    settings = get_settings()
    current = load_current_model(None)

    async def replayed() -> tuple[list, list]:
        return ((await read_topic("revisit.decisions", True, GROUP, sys.stderr.isatty()))[0],
                (await read_topic("revisit.outcomes", True, GROUP, sys.stderr.isatty()))[0])

    decisions, outcomes = asyncio.run(replayed())
    sources = observed_series(decisions, outcomes, RevisitClock.from_settings(settings))
    if not sources:
        raise CommandError(f"no watched page has enough observations to retrain on yet ({len(decisions)} "
                           f"decisions, {len(outcomes)} revisit outcomes replayed; a page needs ≥ 10 revisits "
                           "that found items in its first 85 % and ≥ 2 after)", code=1)
    try:
        result = retrain(sources, current, args.target, retrained_path(settings), args.dry_run, progress=note)
    except TargetNotReached as error:
        raise CommandError(f"{error}; the current model stays", code=1) from None
    if args.json:
        print_json(vars(result))
        return 0
    for name, version, figures in (("current", result.current_version, result.current),
                                   ("candidate", result.candidate_version, result.candidate)):
        print(f"  {name:<9} {version}: timeliness {figures['timeliness']}, friendliness "
              f"{figures['friendliness']}, delay {figures['delay_h']} h (held-out window of {result.sources} "
              "watched pages)")
    _print_outcome(result.better, result.swapped, result.written_to)
    return 0


def _retrain_classifier(args: argparse.Namespace) -> int:
    try:
        result = _classifier_retrained(args)
    except ValueError as error:
        raise CommandError(f"{error}; the current classifier stays", code=1) from None
    if args.json:
        print_json(vars(result))
        return 0
    _print_classifier(result)
    return 0


def _classifier_retrained(args: argparse.Namespace):
    """The classifier compared (and swapped in where better) on the verdicts replayed; ValueError where they
    are too few to compare."""
    from jobs.replay import read_topic
    from jobs.retrain_classifier import retrain_classifier, verdict_pages
    from models.discovery.classifier import (
        SourcePageClassifier,
        current_classifier_path,
        labelled_pages,
        retrained_classifier_path,
    )
    from models.model_files import ModelVersionError
    from models.text_encoders import EncoderUnavailable

    settings = get_settings()
    if args.folds < 2:
        raise CommandError("--folds must be at least 2")
    sites = [Path(folder) for folder in args.sites] if args.sites else [settings.data / "sites"]
    missing = [str(folder) for folder in sites if not folder.is_dir()]
    if missing:
        raise CommandError(f"no labelled sites at {', '.join(missing)} (run `make setup`, or pass --sites DIR…)")
    try:
        current = SourcePageClassifier.load(current_classifier_path(settings))
    except (FileNotFoundError, ModelVersionError, EncoderUnavailable) as error:
        raise CommandError(str(error)) from None

    async def replayed() -> tuple[list, list]:
        verdicts = (await read_topic("sources.verdicts", True, GROUP, sys.stderr.isatty()))[0]
        judged = {verdict.url for verdict in verdicts}
        # Only the judged pages are kept: the topic holds every page the crawl fetched.
        fetched = (await read_topic("pages.fetched", True, GROUP, sys.stderr.isatty(),
                                    keep=lambda page: page.url in judged or page.final_url in judged))[0]
        return verdicts, fetched

    verdicts, fetched = asyncio.run(replayed())
    judged = verdict_pages(verdicts, fetched)
    if judged.without_page:
        note(f"{len(judged.without_page)} judged page(s) not on pages.fetched any more, left out: "
             + ", ".join(judged.without_page[:5]) + (" …" if len(judged.without_page) > 5 else ""))
    return retrain_classifier(labelled_pages(sites), judged, current, retrained_classifier_path(settings),
                              args.dry_run, args.folds, progress=note)


def _print_classifier(result) -> None:
    for recipe in ("without", "with"):
        labelled, held_out = result.labelled[recipe], result.verdicts_held_out[recipe]
        print(f"  {recipe + ' verdicts':<16} labelled sites (CV, {result.labelled_sites} sites): F1 "
              f"{labelled['f1']}, accuracy {labelled['accuracy']}; the {result.verdicts} judged pages on "
              f"{result.verdict_sites} sites, held out: accuracy {held_out['accuracy']}, F1 {held_out['f1']}")
    low, high = result.labelled_f1_change
    print(f"  labelled sites' F1 change with the verdicts: 95 % within {low:+}…{high:+} (sites resampled)")
    for reason in result.reasons:
        print(f"  not better: {reason}")
    _print_outcome(result.better, result.swapped, result.written_to)


def _retrain_discovery(args: argparse.Namespace) -> int:
    """Both halves of discovery: the classifier (as `retrain classifier`) and the stopping model, each reported
    with why it was skipped where its verdicts are too few; exit 1 where both were."""
    halves: dict[str, object] = {}
    for name, retrained in (("classifier", _classifier_retrained), ("stopping", _stopping_retrained)):
        note(f"{name}:")
        try:
            halves[name] = retrained(args)
        except ValueError as error:
            halves[name] = f"{error}; the current model stays"
    if args.json:
        print_json({name: vars(half) if not isinstance(half, str) else {"skipped": half}
                    for name, half in halves.items()})
    else:
        for name, half in halves.items():
            print(f"{name}:")
            if isinstance(half, str):
                print(f"  skipped: {half}")
            elif name == "classifier":
                _print_classifier(half)
            else:
                _print_stopping(half)
    return 1 if all(isinstance(half, str) for half in halves.values()) else 0


def _stopping_retrained(args: argparse.Namespace):
    """The stopping model compared (and swapped in where better) on the episodes' choices labelled by the
    verdicts replayed; ValueError where they are too few to compare."""
    from jobs.replay import read_topic
    from jobs.retrain_stopping import retrain_stopping, verdict_samples
    from models.discovery.agent import DEFAULT_AGENT, RLCrawler
    from models.discovery.stopping import load_retrained, retrained_stopping_path
    from models.model_files import ModelVersionError
    from models.text_encoders import EncoderUnavailable

    settings = get_settings()
    try:
        agent = RLCrawler.load(settings.discovery_agent or DEFAULT_AGENT)
    except (FileNotFoundError, ModelVersionError, EncoderUnavailable) as error:
        raise CommandError(str(error)) from None
    if agent.stopper is None:
        raise ValueError("the discovery agent stops by η, not by a stopping model")
    path = retrained_stopping_path(settings)
    current = (load_retrained(path, agent.stopper) if path.is_file() else None) or agent.stopper

    async def replayed() -> tuple[list, list, list]:
        return tuple([(await read_topic(name, True, GROUP, sys.stderr.isatty()))[0]
                      for name in ("discovery.episodes", "sites.verdicts", "sources.verdicts")])

    episodes, site_verdicts, source_verdicts = asyncio.run(replayed())
    judged = verdict_samples(episodes, site_verdicts, source_verdicts)
    note(f"{len(episodes)} episodes, {len(site_verdicts)} site verdicts, {len(source_verdicts)} verdicts on "
         f"found pages: {len(judged.samples)} labelled choices on {len(judged.sites)} sites")
    miss_cost = settings.discovery_miss_cost
    return retrain_stopping(agent.stopper.at_miss_cost(miss_cost), current.at_miss_cost(miss_cost), judged, path,
                            args.dry_run, args.folds)


def _print_stopping(result) -> None:
    episodes = ", ".join(f"{count} {how}" for how, count in sorted(result.labelled_episodes.items()))
    print(f"  {result.samples} choices of episodes judged on {result.verdict_sites} sites ({episodes}; "
          f"{result.unlabelled_episodes} judged but unlabelled), beside the agent's {result.base_samples} samples")
    for model, figures in result.held_out.items():
        print(f"  {model.replace('_', ' '):<14} held out by site, at a miss cost of {result.miss_cost}: cost "
              f"{figures['cost']} ({figures['stopped_where_reachable']} stops where a source page was reachable, "
              f"{figures['went_on_where_not']} clicks where none was)")
    for reason in result.reasons:
        print(f"  not better: {reason}")
    _print_outcome(result.better, result.swapped, result.written_to)


def _print_outcome(better: bool, swapped: bool, written_to: str | None) -> None:
    if swapped:
        kept = f"swapped in at {written_to} (workers load it on their next start)"
    else:
        kept = "the current model stays" + (" (--dry-run)" if better else "")
    print(f"the candidate is {'better' if better else 'not better'}: {kept}")
