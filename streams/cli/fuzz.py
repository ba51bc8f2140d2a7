"""`sourcewatch fuzz pages`: generated and mutated pages through every stage that reads one (jobs.fuzz_pages)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, print_json, progress_bar
from streams.threads import threads_for_reading


class Fuzz(Command):
    name = "fuzz"
    help = "mutated and generated pages through every page-reading stage: no exception, bounded time per page"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("what", choices=["pages"])
        parser.add_argument("--documents", type=int, default=100_000, help="documents to read (default 100000)")
        parser.add_argument("--seed", type=int, default=0, help="draws every document (default 0)")
        parser.add_argument("--start", type=int, default=0,
                            help="index of the first document (with --documents 1: replay one failure)")
        parser.add_argument("--corpus", metavar="DIR",
                            help="HTML pages to mutate (default <data>/sites; none: random bytes only)")
        parser.add_argument("--budget-ms", type=float, default=5_000.0,
                            help="time one page may take in one stage (default 5000)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from jobs.fuzz_pages import fuzz_pages, load_corpus
        from models.pagination.tagger import load_tagger

        settings = get_settings()
        if args.documents < 1:
            raise CommandError("--documents must be at least 1")
        folder = Path(args.corpus) if args.corpus else settings.data / "sites"
        if not folder.is_dir():
            raise CommandError(f"no corpus at {folder} (run `make setup`, or pass --corpus DIR)")
        corpus = load_corpus(folder)
        threads_for_reading()  # the stages as a worker runs them
        tagger = load_tagger(settings.pagination_model)
        # The stages' own warnings (a page cut to the tagger's budget) are what fuzzed pages should cause: the
        # result reports the pages, not thousands of log lines.
        logging.disable(logging.WARNING)
        try:
            with progress_bar("fuzzing pages", args.documents) as advance:
                result = fuzz_pages(corpus, tagger, settings, args.documents, args.seed, args.start,
                                    args.budget_ms, advance=advance)
        finally:
            logging.disable(logging.NOTSET)
        if args.json:
            print_json(vars(result))
        else:
            print(f"{result.documents} documents (seed {result.seed}, from {result.start}; {len(corpus)} corpus "
                  f"pages): {len(result.failures)} raised, {len(result.over_budget)} over {args.budget_ms:.0f} ms; "
                  f"per page through every stage p50 {result.ms_p50} ms, p99 {result.ms_p99} ms, max "
                  f"{result.ms_max} ms; peak memory {result.peak_rss_mb} MB")
            print("  slowest page per stage: " + ", ".join(f"{stage} {ms:.0f} ms"
                                                           for stage, ms in result.slowest_ms.items()))
            print("  no list, by reason: " + (", ".join(f"{reason} {n}" for reason, n in sorted(
                result.no_list.items(), key=lambda item: -item[1])) or "none"))
            for failure in result.failures[:20]:
                print(f"  #{failure['index']} ({failure['mutation']}) {failure['stage']}: {failure['error']} "
                      f"at {failure['where']}")
            for slow in result.over_budget[:20]:
                print(f"  #{slow['index']} ({slow['mutation']}, {slow['bytes']} bytes): {slow['stage']} "
                      f"{slow['ms']} ms")
        return 1 if result.failures or result.over_budget else 0
