"""`sourcewatch train revisit`, `eval revisit` and `bench revisit`: the revisit model."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, ensure_local_kafka, existing_files, note, print_json


def add_series_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", nargs="+", required=True, metavar="CSV",
                        help="update series, e.g. <data>/revisit/epa/events.csv")
    parser.add_argument("--tick", choices=["1h", "1d"], default="1h", help="tick length (default 1h)")


def add_schedule_options(parser: argparse.ArgumentParser, applies: str = "") -> None:
    parser.add_argument("--max-interval-hours", type=float, metavar="H",
                        help=f"{applies}the scheduler's longest interval beside the model (default: the setting "
                             "revisit_max_interval_hours at ticks shorter than it, none where it would be a fetch "
                             "every tick; 0: none)")
    parser.add_argument("--exploration-share", type=float, metavar="S",
                        help=f"{applies}the scheduler's exploration share (default: the setting "
                             "revisit_exploration_share; 0: none)")


def load_current_model(path: str | None):
    from agents.revisit import current_model_path
    from models.model_files import ModelVersionError
    from models.revisit.rhythm_model import load_model

    try:
        return load_model(Path(path) if path else current_model_path(get_settings()))
    except (FileNotFoundError, ModelVersionError) as error:
        raise CommandError(str(error)) from None


class TrainRevisit(Command):
    name = "revisit"
    small_models = True
    help = "train TSP-R, the model the scheduler runs, its threshold chosen on cold-start validation watches"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        add_series_options(parser)
        parser.add_argument("--target", type=float, default=0.95,
                            help="timeliness the threshold must reach on validation (default 0.95)")
        parser.add_argument("--out", required=True, help="model file to write")
        add_schedule_options(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.revisit.report import train_revisit_model
        from models.revisit.training import TargetNotReached

        paths = existing_files(args.events, "file")
        try:
            model = train_revisit_model(paths, args.tick, args.target, _schedule(args), progress=note)
        except TargetNotReached as error:
            raise CommandError(str(error), code=1) from None
        model.save(Path(args.out))
        print(f"trained on {model.trained_on['sources']} sources ({model.trained_on['rows']}), threshold "
              f"{model.threshold:.3g} → {args.out} ({model.version})")
        return 0


class EvalRevisit(Command):
    name = "revisit"
    small_models = True
    help = "every revisit policy on real update series, thresholds chosen on validation"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        add_series_options(parser)
        parser.add_argument("--no-model", action="store_true",
                            help="the baselines only (training the LSTM takes minutes)")
        parser.add_argument("--per-source", action="store_true",
                            help="also one model per source, as in the paper (minutes more)")
        parser.add_argument("--cold-start", action="store_true",
                            help="sources held out by source, each watched from a first read of its listing on "
                                 "honest observations; every policy online (folds by source)")
        parser.add_argument("--folds", type=int, default=3, help="--cold-start: folds by source (default 3)")
        add_schedule_options(parser, "--cold-start: ")
        parser.add_argument("--max-sources", type=int, metavar="N",
                            help="--cold-start: only the first N usable sources by id (a quicker look)")
        parser.add_argument("--plot", metavar="PNG", help="write the timeliness–friendliness plane")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.revisit.report import evaluate_revisit, print_revisit

        paths = existing_files(args.events, "file")
        if args.cold_start:
            from models.revisit.report import evaluate_cold_start_revisit

            if args.per_source or args.no_model:
                raise CommandError("--cold-start runs every policy, models included; it has no --per-source or "
                                   "--no-model")
            if args.folds < 2:
                raise CommandError("--folds must be at least 2")
            if args.max_sources is not None and args.max_sources < 2 * args.folds:
                raise CommandError(f"--max-sources must be at least 2 per fold ({2 * args.folds})")
            result = evaluate_cold_start_revisit(paths, args.tick, args.folds, args.max_sources,
                                                 _schedule(args), progress=lambda step: note(f"{step} …"))
        else:
            result = evaluate_revisit(paths, args.tick, with_model=not args.no_model, per_source=args.per_source,
                                      progress=lambda step: note(f"{step} …"))
        if args.plot:
            from models.revisit.plots import plot_plane

            plot_plane(result, Path(args.plot))
            print(f"plot written to {args.plot}", file=sys.stderr)
        print_json(result) if args.json else print_revisit(result)
        return 0


def _schedule(args: argparse.Namespace):
    """The scheduler's rules the cold-start evaluation runs sourcewatch's policies with: the settings' unless
    given. The longest interval is left out at ticks as long as it (there it would be a fetch every tick)."""
    from models.revisit.coldstart import Schedule
    from models.revisit.data import TICKS

    settings = get_settings()
    hours = settings.revisit_max_interval_hours if args.max_interval_hours is None else args.max_interval_hours
    tick_hours = TICKS[args.tick].total_seconds() / 3600
    share = settings.revisit_exploration_share if args.exploration_share is None else args.exploration_share
    if not 0 <= share < 1:
        raise CommandError("--exploration-share must be in [0, 1)")
    return Schedule(hours if hours and hours > tick_hours else None, share)


class BenchRevisit(Command):
    name = "revisit"
    help = "the revisit stage's CPU per hour of 1-h ticks for N watched pages, and decisions/s"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--model", help="revisit model (default: the current one)")
        parser.add_argument("--sources", type=int, default=100_000, help="watched source pages (default 100000)")
        parser.add_argument("--batch", type=int, default=1024, help="ticks per inference batch (default 1024)")
        parser.add_argument("--runs", type=int, default=3, help="hours measured (default 3)")
        parser.add_argument("--through-kafka", action="store_true",
                            help="a whole worker on the real broker, ticks sped up (use fewer --sources)")
        parser.add_argument("--speed", type=float, default=360.0,
                            help="--through-kafka: the clock's speed-up (default 360: a tick every 10 s)")
        parser.add_argument("--seconds", type=float, default=60.0,
                            help="--through-kafka: seconds measured after warm-up (default 60)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from agents.revisit import current_model_path
        from jobs.bench_revisit import bench_revisit, bench_revisit_through_kafka

        model = load_current_model(args.model)
        if args.through_kafka:
            ensure_local_kafka()
            with tempfile.TemporaryDirectory() as workdir:
                result = bench_revisit_through_kafka(
                    Path(args.model) if args.model else current_model_path(get_settings()), args.sources,
                    args.speed, args.seconds, Path(workdir), progress=note)
            print_json(result) if args.json else print(
                f"a worker watching {result['sources']} pages ({result['decisions_per_s']} decisions/s): "
                f"{result['cpu_ms_per_decision']} CPU ms per decision → "
                f"{result['cpu_share_of_one_core_100k_at_1h']:.2%} of one core for 100,000 pages at 1-h ticks "
                f"({result['included']})")
            return 0
        result = bench_revisit(model, args.sources, args.batch, args.runs, progress=note)
        print_json(result) if args.json else print(
            f"{result['sources']} watched pages, one hour of 1-h ticks: {result['cpu_s_per_hour']} CPU s "
            f"({result['cpu_share_of_one_core']:.2%} of one core); {result['decisions_per_s_inference']} "
            f"decisions/s batched inference, {result['decisions_per_s_stage']} decisions/s for the whole stage "
            f"(batch {result['batch']}, median of {result['runs']} hours; {result['included']})")
        return 0
