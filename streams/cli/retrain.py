"""`sourcewatch retrain revisit|classifier`: a model retrained on what the live system learned, replayed from
Kafka (the revisit model on the scheduler's observations, the source-page classifier on people's verdicts),
swapped in only if it does better."""

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
    help = "retrain a model on what the live system observed (replayed from Kafka), and swap it in only if better"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("task", choices=["revisit", "classifier"],
                            help="revisit: on the watched pages' revisit outcomes; classifier: on the verdicts "
                                 "people gave on found sources (POST /api/v1/sources/{id}/verdict)")
        parser.add_argument("--target", type=float, default=0.95,
                            help="revisit: timeliness the threshold must reach on validation (default 0.95)")
        parser.add_argument("--sites", nargs="+", metavar="DIR",
                            help="classifier: the labelled sites it is trained on (default <data>/sites)")
        parser.add_argument("--folds", type=int, default=5, help="classifier: site-grouped folds (default 5)")
        parser.add_argument("--dry-run", action="store_true", help="compare, but keep the current model")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        ensure_local_kafka()
        return _retrain_revisit(args) if args.task == "revisit" else _retrain_classifier(args)


def _retrain_revisit(args: argparse.Namespace) -> int:
    from agents.revisit import retrained_path
    from jobs.replay import read_topic
    from jobs.retrain_revisit import observed_series, retrain
    from models.revisit.training import TargetNotReached

    settings = get_settings()
    current = load_current_model(None)

    async def replayed() -> tuple[list, list]:
        return ((await read_topic("revisit.decisions", True, GROUP, sys.stderr.isatty()))[0],
                (await read_topic("revisit.outcomes", True, GROUP, sys.stderr.isatty()))[0])

    decisions, outcomes = asyncio.run(replayed())
    sources = observed_series(decisions, outcomes, settings.revisit_tick_hours)
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
    try:
        result = retrain_classifier(labelled_pages(sites), judged, current, retrained_classifier_path(settings),
                                    args.dry_run, args.folds, progress=note)
    except ValueError as error:
        raise CommandError(f"{error}; the current classifier stays", code=1) from None
    if args.json:
        print_json(vars(result))
        return 0
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
    return 0


def _print_outcome(better: bool, swapped: bool, written_to: str | None) -> None:
    if swapped:
        kept = f"swapped in at {written_to} (workers load it on their next start)"
    else:
        kept = "the current model stays" + (" (--dry-run)" if better else "")
    print(f"the candidate is {'better' if better else 'not better'}: {kept}")
