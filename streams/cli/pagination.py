"""`sourcewatch train pagination`, `eval pagination` and `bench tag`: the pagination tagger."""

from __future__ import annotations

import argparse
from pathlib import Path

from infra.settings import get_settings
from models.pagination.features import FEATURE_GROUPS
from streams.cli.base import Command, CommandError, add_json, print_json, progress_bar
from streams.heap import freeze_loaded
from streams.threads import threads_for_reading


def pagination_pages(folders: list[str], languages: list[str] | None = None) -> list:
    from models.pagination.data import load_folders

    try:
        pages = load_folders([Path(folder) for folder in folders])
    except FileNotFoundError as error:
        raise CommandError(str(error)) from None
    if languages:
        pages = [page for page in pages if page.language in languages]
    if not pages:
        raise CommandError("no usable pages in " + ", ".join(folders))
    return pages


def relative_to_data(folder: str) -> str:
    """A data folder as a model file records it: relative to settings.data when inside it (so the shipped
    model's record holds on any machine), else absolute."""
    path = Path(folder).resolve()
    try:
        return str(path.relative_to(get_settings().data.resolve()))
    except ValueError:
        return str(path)


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", nargs="+", required=True, metavar="DIR",
                        help="AutoPager/PRNSM folders, e.g. <data>/pagination/prnsm")
    parser.add_argument("--language", nargs="*", help="keep only pages in these languages (e.g. en)")
    parser.add_argument("--epochs", type=int, help="training epochs (default: the trainer's)")
    parser.add_argument("--encoder", choices=["use", "laser", "e5", "none"], default="use",
                        help="pretrained text encoder beside the text n-grams (default use)")
    parser.add_argument("--ablate", nargs="*", choices=FEATURE_GROUPS, help="leave these feature groups out")
    parser.add_argument("--seed", type=int, help="training seed (shuffling, dropout; default: the trainer's)")


def model_options(args: argparse.Namespace) -> dict:
    options = {"encoder": None if args.encoder == "none" else args.encoder, "ablate": args.ablate or []}
    return options | ({"epochs": args.epochs} if args.epochs else {}) | (
        {"seed": args.seed} if args.seed is not None else {})


class TrainPagination(Command):
    name = "pagination"
    help = "train the pagination tagger"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        add_model_options(parser)
        parser.add_argument("--out", required=True, help="model file to write")

    def run(self, args: argparse.Namespace) -> int:
        from models.pagination.tagger import EPOCHS, train

        pages = pagination_pages(args.data, args.language)
        options = model_options(args)
        with progress_bar("training", options.get("epochs", EPOCHS)) as advance:
            model = train(pages, progress=lambda epoch, total, loss: advance(f"loss {loss:.3f}"), **options)
        model.save(Path(args.out), trained_on={"data": [relative_to_data(folder) for folder in args.data],
                                               "languages": args.language or [], "pages": len(pages)})
        print(f"trained on {len(pages)} pages → {args.out}")
        return 0


class EvalPagination(Command):
    name = "pagination"
    help = "domain-grouped CV, zero-shot by language, or a model on held-out pages; AutoPager side by side"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        add_model_options(parser)
        parser.add_argument("--fold-seed", type=int, default=0, help="shuffles the domains into folds (default 0)")
        protocol = parser.add_mutually_exclusive_group()
        protocol.add_argument("--folds", type=int, help="domain-grouped cross-validation with K folds")
        protocol.add_argument("--train-language", nargs="+", metavar="LANG",
                              help="zero-shot: train on these languages, test on every other")
        protocol.add_argument("--model", help="held-out: evaluate this model file (default: the shipped one)")
        protocol.add_argument("--continuation", action="store_true",
                              help="instead of the tagger, the URL rule that finds a 'Load more' link it leaves "
                                   "untagged (a watched list's overflow): where its picks lead by the labels")
        parser.add_argument("--baseline", choices=["autopager"], help="also train and score AutoPager")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.model_files import ModelVersionError
        from models.pagination.evaluation import cross_validate, evaluate_held_out, zero_shot
        from models.pagination.tagger import load_tagger, training_data

        pages = pagination_pages(args.data, args.language)
        if args.continuation:
            from models.pagination.evaluation import continuation_picks

            if args.baseline:
                raise CommandError("--continuation scores a rule, not a tagger: --baseline does not apply")

            with progress_bar("reading the pages' lists", len(pages)) as advance:
                result = continuation_picks(pages, progress=advance)
            print_json(result) if args.json else print_continuation(result)
            return 0
        baseline = args.baseline == "autopager"
        options = model_options(args)
        if args.folds:
            with progress_bar("cross-validating", args.folds) as advance:
                result = cross_validate(pages, args.folds, args.fold_seed, baseline=baseline, progress=advance,
                                        **options)
        elif args.train_language:
            result = zero_shot(pages, args.train_language, baseline=baseline, **options)
        else:
            try:
                model = load_tagger(Path(args.model) if args.model else None)
            except (FileNotFoundError, ModelVersionError) as error:
                raise CommandError(str(error)) from None
            trained_on = training_data(model)
            result = evaluate_held_out(model, pages, pagination_pages(trained_on["data"], trained_on["languages"])
                                       if baseline and trained_on.get("data") else None)
            overlap = ({str(Path(d).resolve()) for d in args.data}
                       & {str(Path(d).resolve()) for d in trained_on["data"]})
            if trained_on.get("languages") and args.language and not set(trained_on["languages"]) & set(args.language):
                overlap = set()  # the same folders, but other languages than the model saw
            result["protocol"] += (f" — NOT held out: the model was trained on {', '.join(sorted(overlap))}"
                                   if overlap else " (held out from the model's training data)")
        print_json(result) if args.json else print_pagination(result)
        return 0


def print_pagination(result: dict) -> None:
    print(result["protocol"])
    for name, figures in (("sourcewatch", result), ("autopager", result.get("baseline"))):
        if figures is None:
            continue
        print(f"  {name}:")
        for kind in ("micro", "macro"):
            print(f"    {kind}: PAGE {figures[kind]['PAGE']['f1']:.3f}  NEXT {figures[kind]['NEXT']['f1']:.3f}  "
                  f"avg {figures[kind]['avg_f1']:.3f}")
        print(f"    macro over paginated pages only: avg {figures['macro_paginated_only']['avg_f1']:.3f}")
        if "by_language" in figures:
            languages = "  ".join(f"{lang} {f1:.3f}" for lang, f1 in figures["by_language"].items())
            print(f"    by language (macro avg): {languages}  mean {figures['by_language_mean']:.3f}")
    print(f"  {result['pages']} pages, {result['nodes']} nodes")


def print_continuation(result: dict) -> None:
    print(f"{result['pages']} pages ({result['paginated']} paginated): {result['picks']} links taken for the "
          f"list's next slice — {result['picks_next']} labelled NEXT, {result['picks_page']} PAGE, "
          f"{result['picks_other']} OTHER, {result['picks_unpaginated']} on pages labelled unpaginated"
          + (f"; precision by the labels {result['precision']:.3f}" if result["precision"] is not None else ""))
    for wrong in result["wrong"]:
        print(f"  labelled no next page: {wrong['page']} → {wrong['link']}")


class BenchTag(Command):
    name = "tag"
    help = "pagination tagging throughput (pages/s, nodes/s)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data", nargs="+", metavar="DIR",
                            help="pagination data to tag (default <data>/pagination/prnsm)")
        parser.add_argument("--model", help="pagination model (default: the shipped one)")
        parser.add_argument("--runs", type=int, default=3, help="runs (default 3)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.pagination.evaluation import tagging_throughput
        from models.pagination.tagger import load_tagger

        threads_for_reading()  # as a worker does: its figures are a worker's
        freeze_loaded()  # as a worker does once its agents are imported
        folders = args.data or [str(get_settings().data / "pagination" / "prnsm")]
        result = tagging_throughput(load_tagger(Path(args.model) if args.model else None),
                                    pagination_pages(folders), args.runs)
        print_json(result) if args.json else print(
            f"tagged {result['pages']} pages ({result['nodes']} nodes) in {result['seconds_median']} s (median of "
            f"{result['runs']}): {result['pages_per_s']} pages/s, {result['nodes_per_s']} nodes/s; with the features' "
            f"caches emptied before each pass {result['pages_per_s_cold_features']} pages/s; pages never seen (the "
            f"text encoder's cache emptied too) {result['pages_per_s_cold']} pages/s")
        return 0
