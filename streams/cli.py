"""`sourcewatch`: the one command line of the project (`sourcewatch COMMAND --help` for each)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from pathlib import Path

from infra.settings import get_settings
from models.pagination_features import FEATURE_GROUPS


def _print_json(value: object) -> None:
    print(json.dumps(value, ensure_ascii=False, default=str))


def _ensure_local_kafka() -> None:
    from infra.kafka_broker import ensure_local_broker

    ensure_local_broker(get_settings())


# -- kafka ------------------------------------------------------------------------------------------

def cmd_kafka(args: argparse.Namespace) -> int:
    from infra.kafka_broker import KafkaSetupError, LocalKafka

    settings = get_settings()
    broker = LocalKafka.from_settings(settings)
    if args.action == "start":
        try:
            state = broker.start()
        except KafkaSetupError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        result = {"running": True, "pid": state.pid, "bootstrap": state.bootstrap,
                  "started_in_seconds": state.started_in_seconds}
    elif args.action == "stop":
        result = {"stopped": broker.stop()}
    else:
        state = broker.state()
        result = {"running": state is not None, "bootstrap": state.bootstrap if state else None,
                  "pid": state.pid if state else None, "data": str(broker.data_dir)}
    if args.json:
        _print_json(result)
    else:
        print(" ".join(f"{key}={value}" for key, value in result.items()))
    return 0


# -- worker and crawl ------------------------------------------------------------------------------

def cmd_worker(args: argparse.Namespace) -> int:
    _ensure_local_kafka()
    from streams.worker import run_worker

    return run_worker(loglevel=args.loglevel)


def _read_seeds(values: list[str]) -> list[str]:
    seeds: list[str] = []
    for value in values:
        path = Path(value)
        if "://" not in value and path.is_file():
            seeds.extend(line.strip() for line in path.read_text().splitlines()
                         if line.strip() and not line.startswith("#"))
        else:
            seeds.append(value)
    return seeds


def cmd_crawl(args: argparse.Namespace) -> int:
    seeds = _read_seeds(args.seeds)
    if not seeds:
        print("error: no seeds given", file=sys.stderr)
        return 2
    return _crawl_and_report(seeds, args)


def _crawl_and_report(seeds: list[str], args: argparse.Namespace) -> int:
    settings = get_settings()
    _ensure_local_kafka()
    from streams.crawl import CrawlPlan, run_crawl

    plan = CrawlPlan(
        seeds=seeds,
        max_pages=args.max_pages or settings.crawl_max_pages,
        # A source crawl follows pagination only: the BFS frontier plans nothing beyond the seeds.
        max_depth=0 if getattr(args, "sources", False) else (
            args.depth if args.depth is not None else settings.crawl_max_depth),
        time_limit=args.time_limit,
        reason="source" if getattr(args, "sources", False) else "seed",
    )
    code, summary = run_crawl(plan, show_progress=not args.json and sys.stderr.isatty())
    if args.json:
        _print_json(summary)
    elif summary:
        print(f"crawl {summary['crawl_id']}: {summary['pages_fetched']} pages in {summary['seconds']}s "
              f"({summary['pages_per_s']} pages/s), {summary['links_found']} links")
        print(f"  by status: {summary['by_status']}")
        print(f"  errors:    {summary['errors'] or 'none'}")
        print(f"  fetch latency p50/p99: {summary['fetch_ms_p50']} / {summary['fetch_ms_p99']} ms")
        if summary["pages_tagged"]:
            print(f"  pagination: {summary['pages_tagged']} listing pages tagged, "
                  f"{summary['multipage_sources']} multi-page sources")
        if summary["records_read"]:
            print(f"  records: {summary['records_read']} read, {summary['new_items']} new items")
    if summary and not summary["pages_ok"]:
        _explain_failed_seeds(summary["seed_errors"])
        return code or 1
    return code if summary else (code or 1)


def _explain_failed_seeds(seed_errors: list[dict]) -> None:
    """Say why a crawl read no page at all (on stderr, so --json output stays one document)."""
    print("error: no page could be read; the seeds failed:", file=sys.stderr)
    for failure in seed_errors:
        print(f"  {failure['url']}: {failure['error']} ({failure['detail']})", file=sys.stderr)
    if any(failure["error"] == "blocked_address" for failure in seed_errors):
        print("  loopback and private addresses are refused by default: pass --allow-loopback for a server on "
              "this machine (SOURCEWATCH_ALLOW_LOOPBACK=true), or set SOURCEWATCH_ALLOW_PRIVATE=true for a "
              "private network", file=sys.stderr)


def cmd_discover(args: argparse.Namespace) -> int:
    from models.model_files import ModelVersionError
    from schemas.discovery import DISCOVER_REASON
    from streams.crawl import CrawlPlan, run_crawl

    seeds = _read_seeds(([args.homepages] if args.homepages else []) + args.urls)
    if not seeds:
        print("error: discover needs homepage URLs (or --homepages FILE)", file=sys.stderr)
        return 2
    from schemas.sites import site_of

    invalid = [seed for seed in seeds if not site_of(seed.strip())]
    if invalid:
        print(f"error: not an absolute http(s) URL (nor a file of them): {', '.join(invalid)}", file=sys.stderr)
        return 2
    settings = get_settings()
    try:
        # Loaded here, once for the worker this process runs, so a missing or stale file stops before it starts.
        from agents.discover import models

        models()
    except (FileNotFoundError, ModelVersionError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _ensure_local_kafka()
    clicks = args.max_clicks or settings.discovery_max_clicks
    plan = CrawlPlan(seeds=seeds, max_pages=clicks + 1, max_depth=clicks, time_limit=args.time_limit,
                     reason=DISCOVER_REASON)
    code, summary = run_crawl(plan, show_progress=not args.json and sys.stderr.isatty())
    if args.json:
        _print_json(summary)
        return code if summary else (code or 1)
    episodes = summary.get("episodes", [])
    found = [url for episode in episodes for url in episode["found"]]
    clicks_spent = sum(episode["clicks"] for episode in episodes)
    print(f"{len(episodes)} of {len(seeds)} episodes ended in {summary.get('seconds')} s: {len(found)} source "
          f"pages found with {clicks_spent} clicks" + (f" ({clicks_spent / len(found):.2f} per source page)"
                                                        if found else ""))
    for episode in episodes:
        clicks = f"{episode['clicks']} click{'s' * (episode['clicks'] != 1)}"
        print(f"  {episode['homepage']}  {episode['end']} after {clicks}  "
              f"{' '.join(episode['found']) or episode['reason']}")
    if summary.get("records_read"):
        print(f"  records read from the source pages found: {summary['records_read']}")
    return code if summary else (code or 1)


def _loopback_crawl_settings() -> None:
    """Our own loopback servers need no politeness delay; set before the settings are first read."""
    os.environ.setdefault("SOURCEWATCH_PER_HOST_DELAY_SECONDS", "0")
    os.environ.setdefault("SOURCEWATCH_PER_HOST_CONCURRENCY", "8")
    os.environ["SOURCEWATCH_ALLOW_LOOPBACK"] = "true"
    get_settings.cache_clear()


def cmd_crawl_snapshots(args: argparse.Namespace) -> int:
    """Serve real snapshots on loopback and crawl them whole."""
    _loopback_crawl_settings()
    from infra.site_server import serving_sites

    dirs = [Path(d) for d in args.dirs]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        print(f"error: no site snapshot at {', '.join(missing)}", file=sys.stderr)
        return 2
    with serving_sites(dirs) as homepages:
        if not args.json:
            print(f"serving {len(homepages)} site(s) on loopback; crawling them through Kafka …")
        return _crawl_and_report(list(homepages.values()), args)


def cmd_demo(args: argparse.Namespace) -> int:
    _loopback_crawl_settings()
    from streams.demo import DemoPlan, run_demo

    summary = run_demo(DemoPlan(sites=args.sites, seed=args.seed, duration=args.duration, speed=args.speed,
                                watch=args.watch),
                       show_progress=not args.json and sys.stderr.isatty())
    if args.json:
        _print_json(summary)
    else:
        from streams.demo import print_summary

        print_summary(summary)
    return 0 if summary.get("pages_fetched") else 1


def _serve_until_stopped(server, announce) -> int:
    """Start a server (`start()` → what it serves), announce it on stdout, and serve until Ctrl-C/SIGTERM."""

    async def serve() -> None:
        announce(await server.start())
        sys.stdout.flush()
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


def cmd_simweb(args: argparse.Namespace) -> int:
    from infra.simweb.server import SimWeb

    web = SimWeb(args.sites, args.seed, args.speed, get_settings().data / "revisit")

    def announce(homepages: dict[str, str]) -> None:
        if args.json:
            _print_json({"control": web.control_url, "sites": homepages})
        else:
            print(f"{len(homepages)} sites; truth at {web.control_url}/__truth__; first: {next(iter(homepages.values()))}")

    return _serve_until_stopped(web, announce)


def cmd_bench(args: argparse.Namespace) -> int:
    if args.kind == "revisit":
        from models.revisit_model import load_predictor
        from streams.bench_revisit import bench_revisit

        from streams.revisit_retrain import current_model_path

        try:
            model = load_predictor(Path(args.model) if args.model else current_model_path(get_settings()))
        except (FileNotFoundError, ValueError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        if args.through_kafka:
            import tempfile

            from streams.bench_revisit import bench_revisit_through_kafka

            _ensure_local_kafka()
            with tempfile.TemporaryDirectory() as workdir:
                result = bench_revisit_through_kafka(
                    Path(args.model) if args.model else current_model_path(get_settings()), args.sources,
                    args.speed, args.seconds, Path(workdir), progress=lambda line: print(f"  {line}", file=sys.stderr))
            _print_json(result) if args.json else print(
                f"a worker watching {result['sources']} pages ({result['decisions_per_s']} decisions/s): "
                f"{result['cpu_ms_per_decision']} CPU ms per decision → "
                f"{result['cpu_share_of_one_core_100k_at_1h']:.2%} of one core for 100,000 pages at 1-h ticks "
                f"({result['included']})")
            return 0
        result = bench_revisit(model, args.sources, args.batch, args.runs,
                               progress=lambda line: print(f"  {line}", file=sys.stderr))
        _print_json(result) if args.json else print(
            f"{result['sources']} watched pages, one hour of 1-h ticks: {result['cpu_s_per_hour']} CPU s "
            f"({result['cpu_share_of_one_core']:.2%} of one core); {result['decisions_per_s_inference']} decisions/s "
            f"batched inference, {result['decisions_per_s_stage']} decisions/s for the whole stage (batch "
            f"{result['batch']}, median of {result['runs']} hours; {result['included']})")
        return 0
    if args.kind == "discovery":
        from models.discovery_rl import DEFAULT_AGENT, RLCrawler
        from models.model_files import ModelVersionError
        from streams.bench_discovery import bench_discovery

        try:
            agent = RLCrawler.load(Path(args.model) if args.model else DEFAULT_AGENT)
        except (FileNotFoundError, ModelVersionError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        folders = [Path(folder) for folder in args.data or [get_settings().data / "sites"]]
        result = bench_discovery(agent, folders, runs=args.runs)
        _print_json(result) if args.json else print(
            f"{result['anchors']} anchors of {result['pages']} pages: {result['anchors_per_s_cold']} anchors/s with "
            f"a cold text cache, {result['anchors_per_s_warm']} warm (median of {result['runs']})")
        return 0
    if args.kind == "tag":
        from models.pagination_eval import tagging_throughput
        from models.pagination_tagger import load_tagger

        folders = args.data or [str(get_settings().data / "pagination" / "prnsm")]
        result = tagging_throughput(load_tagger(Path(args.model) if args.model else None),
                                    _pagination_pages(folders), args.runs)
        _print_json(result) if args.json else print(
            f"tagged {result['pages']} pages ({result['nodes']} nodes) in {result['seconds_median']} s (median of "
            f"{result['runs']}): {result['pages_per_s']} pages/s, {result['nodes_per_s']} nodes/s")
        return 0
    if args.kind == "crawl":
        from streams.bench import bench_crawl, print_table

        _ensure_local_kafka()
        snapshots = None if args.no_snapshots else get_settings().data / "sites"
        report = bench_crawl(args.sites, args.seed, args.runs, args.max_pages, snapshots,
                             progress=(lambda line: print(line, file=sys.stderr)))
        _print_json(report) if args.json else print_table(report)
        return 0
    seeds = _read_seeds(args.seeds or [])
    if not seeds:
        print(f"error: bench {args.kind} needs --seeds", file=sys.stderr)
        return 2
    _loopback_crawl_settings()
    from streams.crawl import CrawlPlan

    settings = get_settings()
    plan = CrawlPlan(seeds, args.max_pages, settings.crawl_max_depth)
    if args.kind == "fetch-parse":
        from streams.bench import crawl_without_kafka

        result = asyncio.run(crawl_without_kafka(plan, settings))
    else:
        from streams.bench_scrapy import run_scrapy

        result = run_scrapy(plan.seeds, plan.max_pages, plan.max_depth, settings)
    _print_json(result) if args.json else print(result)
    return 0


def _pagination_pages(folders: list[str], languages: list[str] | None = None) -> list:
    from models.pagination_data import load_folders

    pages = load_folders([Path(folder) for folder in folders])
    if languages:
        pages = [page for page in pages if page.language in languages]
    if not pages:
        raise SystemExit("error: no usable pages in " + ", ".join(folders))
    return pages


def _relative_to_data(folder: str) -> str:
    """A data folder as a model file records it: relative to settings.data when inside it (so the shipped
    model's record holds on any machine), else absolute."""
    path = Path(folder).resolve()
    try:
        return str(path.relative_to(get_settings().data.resolve()))
    except ValueError:
        return str(path)


def _model_options(args: argparse.Namespace) -> dict:
    options = {"encoder": None if args.encoder == "none" else args.encoder, "ablate": args.ablate or []}
    return options | ({"epochs": args.epochs} if args.epochs else {}) | (
        {"seed": args.seed} if args.seed is not None else {})


@contextlib.contextmanager
def _progress_bar(what: str, total: int):
    """A progress bar on stderr (when it is a terminal); yields advance(note) for each step done."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), disable=not sys.stderr.isatty(), transient=True) as bar:
        task = bar.add_task("", total=total)
        yield lambda note="": bar.update(task, advance=1, description=note)


def _event_files(args: argparse.Namespace) -> list[Path] | None:
    """The --events files, or None after saying what is wrong."""
    if not args.events:
        print(f"error: {args.command} revisit needs --events CSV…", file=sys.stderr)
        return None
    missing = [path for path in args.events if not Path(path).is_file()]
    if missing:
        print(f"error: no such file: {', '.join(missing)}", file=sys.stderr)
        return None
    return [Path(path) for path in args.events]


def cmd_train_revisit(args: argparse.Namespace) -> int:
    from models.revisit_training import TargetNotReached
    from streams.revisit_report import train_revisit_model

    paths = _event_files(args)
    if paths is None:
        return 2
    try:
        model = train_revisit_model(paths, args.tick, args.target, progress=lambda step: print(f"  {step}",
                                                                                               file=sys.stderr))
    except TargetNotReached as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    model.save(Path(args.out))
    print(f"trained on {model.trained_on['sources']} sources ({model.trained_on['rows']}), threshold "
          f"{model.threshold:.3g} → {args.out} ({model.version})")
    return 0


def _pretrain_config(args: argparse.Namespace):
    from models.discovery_rl_training import PretrainConfig

    return PretrainConfig(**({"epochs": args.epochs} if args.epochs else {}), auxiliary=not args.no_aux,
                          stop_rule=args.stop_rule)


def _finetuning(args: argparse.Namespace):
    """The fine-tuning asked for by --finetune-simweb N (None without)."""
    if not args.finetune_simweb:
        return None
    from models.discovery_rl_finetuning import FinetuneConfig
    from streams.discovery_eval import Finetuning

    config = FinetuneConfig(**({"epochs": args.finetune_epochs} if args.finetune_epochs else {}),
                            stop_rule=args.stop_rule)
    return Finetuning(args.finetune_simweb, args.finetune_seed, config, rehearse=not args.no_rehearse)


def _training_note(point: dict) -> str:
    if "recall_at_clicks" in point:
        return f"pre-training: recall at 1/2/3 clicks {point['recall_at_clicks']}"
    return f"fine-tuning: judged found {point['judged_found']}"


def cmd_train_discovery(args: argparse.Namespace) -> int:
    from models.anchor_boxes import BrowserUnavailable
    from models.model_files import ModelVersionError
    from streams.discovery_eval import NoSites, train_agent

    if not args.sites:
        print("error: train discovery needs --sites DIR…", file=sys.stderr)
        return 2
    if args.start_from and not args.finetune_simweb:
        print("error: --from fine-tunes a saved agent: give --finetune-simweb N too", file=sys.stderr)
        return 2
    config, finetuning = _pretrain_config(args), _finetuning(args)
    steps = (0 if args.start_from else config.epochs) + (finetuning.config.epochs if finetuning else 0)
    try:
        with _progress_bar("training", steps) as advance:
            agent, history = train_agent([Path(folder) for folder in args.sites], config,
                                         progress=lambda epoch, point: advance(_training_note(point)),
                                         finetuning=finetuning,
                                         start_from=Path(args.start_from) if args.start_from else None)
    except (NoSites, FileNotFoundError, BrowserUnavailable, ModelVersionError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    agent.save(Path(args.out))
    finetuned = f", fine-tuned on {len(agent.finetuned_on)} simulated sites" if agent.finetuned_on else ""
    print(f"trained on {len(agent.trained_on)} sites{finetuned}, η {agent.eta:.3f}; "
          f"{_training_note(history[-1]) if history else ''} → {args.out}")
    return 0


def cmd_train_classifier(args: argparse.Namespace) -> int:
    from models.source_classifier import train_source_classifier
    from models.text_encoders import EncoderUnavailable

    if not args.sites:
        print("error: train classifier needs --sites DIR…", file=sys.stderr)
        return 2
    try:
        classifier = train_source_classifier([Path(folder) for folder in args.sites], args.encoder)
    except (FileNotFoundError, EncoderUnavailable, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    classifier.save(Path(args.out))
    print(f"trained on {len(classifier.trained_on)} sites → {args.out}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from models.pagination_tagger import EPOCHS, train

    if args.task == "revisit":
        return cmd_train_revisit(args)
    if args.task == "discovery":
        return cmd_train_discovery(args)
    if args.task == "classifier":
        return cmd_train_classifier(args)
    if not args.data:
        print("error: train pagination needs --data DIR…", file=sys.stderr)
        return 2
    pages = _pagination_pages(args.data, args.language)
    options = _model_options(args)
    with _progress_bar("training", options.get("epochs", EPOCHS)) as advance:
        model = train(pages, progress=lambda epoch, total, loss: advance(f"loss {loss:.3f}"), **options)
    model.save(Path(args.out), trained_on={"data": [_relative_to_data(folder) for folder in args.data],
                                           "languages": args.language or [], "pages": len(pages)})
    print(f"trained on {len(pages)} pages → {args.out}")
    return 0


def cmd_retrain(args: argparse.Namespace) -> int:
    from models.revisit_model import load_predictor
    from models.revisit_training import TargetNotReached
    from streams.replay import read_topic
    from streams.revisit_retrain import current_model_path, observed_series, retrain, retrained_path

    settings = get_settings()
    _ensure_local_kafka()
    try:
        current = load_predictor(current_model_path(settings))
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    async def replayed() -> tuple[list, list]:
        group = "sourcewatch-retrain"
        return ((await read_topic("revisit.decisions", True, group, sys.stderr.isatty()))[0],
                (await read_topic("revisit.outcomes", True, group, sys.stderr.isatty()))[0])

    decisions, outcomes = asyncio.run(replayed())
    sources = observed_series(decisions, outcomes, settings.revisit_tick_hours)
    if not sources:
        print(f"error: no watched page has enough observations to retrain on yet ({len(decisions)} decisions, "
              f"{len(outcomes)} revisit outcomes replayed; a page needs ≥ 10 revisits that found items in its "
              "first 85 % and ≥ 2 after)", file=sys.stderr)
        return 1
    try:
        result = retrain(sources, current, args.target, retrained_path(settings), args.dry_run,
                         progress=lambda step: print(f"  {step}", file=sys.stderr))
    except TargetNotReached as error:
        print(f"error: {error}; the current model stays", file=sys.stderr)
        return 1
    if args.json:
        _print_json(vars(result))
        return 0
    for name, version, figures in (("current", result.current_version, result.current),
                                   ("candidate", result.candidate_version, result.candidate)):
        print(f"  {name:<9} {version}: timeliness {figures['timeliness']}, friendliness {figures['friendliness']}, "
              f"delay {figures['delay_h']} h (held-out window of {result.sources} watched pages)")
    verdict = "better" if result.better else "not better"
    print(f"the candidate is {verdict}: " + (f"swapped in at {result.written_to} (workers load it on their next "
                                              "start)" if result.swapped else "the current model stays"))
    return 0


def cmd_eval_records(args: argparse.Namespace) -> int:
    from streams.records_report import NoRecordData, evaluate_records, print_evaluation

    if len(args.data) != 1:
        print("error: eval records takes one data folder", file=sys.stderr)
        return 2
    try:
        result = evaluate_records(Path(args.data[0]), _progress_bar)
    except NoRecordData as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _print_json(result) if args.json else print_evaluation(result)
    return 0


def cmd_eval_revisit(args: argparse.Namespace) -> int:
    from streams.revisit_report import evaluate_revisit, print_revisit

    paths = _event_files(args)
    if paths is None:
        return 2
    result = evaluate_revisit(paths, args.tick, with_model=not args.no_model, per_source=args.per_source,
                              progress=lambda step: print(f"  {step} …", file=sys.stderr))
    if args.plot:
        from streams.revisit_plot import plot_plane

        plot_plane(result, Path(args.plot))
        print(f"plot written to {args.plot}", file=sys.stderr)
    _print_json(result) if args.json else print_revisit(result)
    return 0


def cmd_eval_discovery(args: argparse.Namespace) -> int:
    from models.anchor_boxes import BrowserUnavailable
    from models.model_files import ModelVersionError
    from streams.discovery_eval import FINETUNED, POLICIES, NoSites, evaluate_discovery

    if not args.sites and not args.simweb:
        print("error: eval discovery needs --sites DIR… or --simweb N", file=sys.stderr)
        return 2
    policies = args.policy or list(POLICIES)
    unknown = [name for name in policies if name not in POLICIES]
    if unknown:
        print(f"error: policy {', '.join(unknown)} is not built yet; available: {', '.join(POLICIES)}",
              file=sys.stderr)
        return 2
    try:
        config = _pretrain_config(args)
        result = evaluate_discovery([Path(folder) for folder in args.sites or []], policies, args.max_steps,
                                    args.folds, args.fold_seed, Path(args.model) if args.model else None, config,
                                    progress=lambda name: print(f"  {name} done", file=sys.stderr),
                                    simweb=(args.simweb, args.simweb_seed) if args.simweb else None,
                                    finetuning=_finetuning(args))
    except (NoSites, FileNotFoundError, ModelVersionError, BrowserUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.plot and "rl" in result:
        from streams.discovery_plot import plot_discovery

        for path in plot_discovery(result, Path(args.plot)):
            print(f"plot written to {path}", file=sys.stderr)
    if args.json:
        _print_json(result)
        return 0
    print(f"{result[policies[0]]['sites']} sites ({result[policies[0]]['sites_with_source_pages']} with a source "
          f"page), at most {result['max_steps']} clicks; {result['protocol']}")
    for name in [name for name in (*policies, FINETUNED) if name in result]:
        f = result[name]
        print(f"  {name:<12} precision {f['precision']}, recall {f['recall']}, unit cost {f['unit_cost']}, "
              f"clicks on sites without one {f['clicks_on_negative_sites']}")
        for k, fixed in f.get("fixed_steps", {}).items():
            print(f"    {k} fixed click(s): precision {fixed['precision']}, recall {fixed['recall']}, "
                  f"unit cost {fixed['unit_cost']}, clicks on sites without one {fixed['clicks_on_negative_sites']}")
    return 0


def cmd_eval_classifier(args: argparse.Namespace) -> int:
    from models.source_classifier import PAGE_INPUTS, cross_validate, labelled_pages, listing_pages, page_vectors
    from models.text_encoders import EncoderUnavailable, get_encoder

    if not args.sites:
        print("error: eval classifier needs --sites DIR…", file=sys.stderr)
        return 2
    try:
        pages = labelled_pages([Path(folder) for folder in args.sites])
        if args.extra_positives:
            pages += listing_pages(Path(args.extra_positives))
        encoder = get_encoder(args.encoder)
    except (FileNotFoundError, EncoderUnavailable, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sites = len({page.site for page in pages})
    folds = min(args.folds or 5, sites)
    if folds < 2:
        print("error: eval classifier needs at least two labelled sites (site-grouped cross-validation)",
              file=sys.stderr)
        return 2
    result = {"protocol": f"site-grouped {folds}-fold cross-validation, fold seed {args.fold_seed}"
                          + (f"; {args.extra_positives} listing pages added to every training fold"
                             if args.extra_positives else ""),
              "encoder": args.encoder, "sites": sites}
    for name in PAGE_INPUTS:
        print(f"  encoding ({name}) …", file=sys.stderr)
        result[name] = cross_validate(pages, page_vectors(pages, encoder, name), folds, args.fold_seed)
    if args.json:
        _print_json(result)
        return 0
    print(f"{result['four_texts']['pages']} pages of {sites} sites ({result['four_texts']['source_pages']} source "
          f"pages); {result['protocol']}; encoder {args.encoder}")
    for name in PAGE_INPUTS:
        f = result[name]
        print(f"  {name:<19} accuracy {f['accuracy']}, precision {f['precision']}, recall {f['recall']}, f1 {f['f1']}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    if args.task == "revisit":
        return cmd_eval_revisit(args)
    if args.task == "classifier":
        return cmd_eval_classifier(args)
    if args.task == "discovery":
        return cmd_eval_discovery(args)
    if not args.data:
        print(f"error: eval {args.task} needs --data DIR…", file=sys.stderr)
        return 2
    if args.task == "records":
        return cmd_eval_records(args)
    from models.pagination_eval import cross_validate, evaluate_held_out, zero_shot
    from models.model_files import ModelVersionError
    from models.pagination_tagger import load_tagger, training_data

    pages = _pagination_pages(args.data, args.language)
    baseline = args.baseline == "autopager"
    options = _model_options(args)
    if args.folds:
        with _progress_bar("cross-validating", args.folds) as advance:
            result = cross_validate(pages, args.folds, args.fold_seed, baseline=baseline, progress=advance,
                                    **options)
    elif args.train_language:
        result = zero_shot(pages, args.train_language, baseline=baseline, **options)
    else:
        model_path = Path(args.model) if args.model else None
        try:
            model = load_tagger(model_path)
        except (FileNotFoundError, ModelVersionError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        trained_on = training_data(model)
        result = evaluate_held_out(model, pages, _pagination_pages(trained_on["data"], trained_on["languages"])
                                   if baseline and trained_on.get("data") else None)
        overlap = {str(Path(d).resolve()) for d in args.data} & {str(Path(d).resolve()) for d in trained_on["data"]}
        if trained_on.get("languages") and args.language and not set(trained_on["languages"]) & set(args.language):
            overlap = set()  # the same folders, but other languages than the model saw
        result["protocol"] += (f" — NOT held out: the model was trained on {', '.join(sorted(overlap))}" if overlap
                               else " (held out from the model's training data)")
    if args.json:
        _print_json(result)
        return 0
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
    return 0


def cmd_tag(args: argparse.Namespace) -> int:
    from models.model_files import ModelVersionError
    from streams.tag import TagInputError, tag_target

    try:
        tags = tag_target(args.target, get_settings(), Path(args.model) if args.model else None, args.base_url)
    except (TagInputError, FileNotFoundError, ModelVersionError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        _print_json(tags.model_dump(mode="json", include={"final_url", "model", "nodes", "links", "tagging_ms"}))
        return 0
    print(f"{tags.final_url}: {tags.nodes} clickable nodes, {len(tags.links)} pagination links ({tags.model})")
    for link in tags.links:
        print(f"  {link.label:<4}  {link.text[:40]!r:<42} {link.url or '(no link)'}")
    return 0


# -- ClickHouse ------------------------------------------------------------------------------------

def _query_and_print(query: str, as_json: bool) -> int:
    try:
        from infra.sql_owner import read_clickhouse

        columns, rows = read_clickhouse(get_settings(), query)
    except Exception as error:  # the database's message is what the user needs
        print(f"error: {error}", file=sys.stderr)
        return 1
    if as_json:
        _print_json([dict(zip(columns, row)) for row in rows])
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(*columns)
    for row in rows:
        table.add_row(*(str(value) for value in row))
    Console().print(table)
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    return _query_and_print(args.query, args.json)


def cmd_watch(args: argparse.Namespace) -> int:
    from streams.watch import FIGURES, add_sources, run_watch, status_query, watch_requests

    if args.status:
        return _query_and_print(status_query(), args.json)
    if args.sources and not Path(args.sources).is_file():
        print(f"error: no such file: {args.sources}", file=sys.stderr)
        return 2
    urls = _read_seeds(([args.sources] if args.sources else []) + args.urls)
    if not urls:
        print("error: watch needs --sources FILE or URLs (or --status)", file=sys.stderr)
        return 2
    try:
        sources = watch_requests(urls)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _ensure_local_kafka()
    if args.run:
        code, summary = run_watch(sources, args.run, show_progress=not args.json and sys.stderr.isatty())
        if args.json:
            _print_json(summary)
        elif summary:
            print(f"watched {len(sources)} source pages for {summary['seconds']} s: {summary['decisions']} "
                  f"decisions, {summary['fetches']} revisits")
            for row in summary["sources"]:
                figures = "  ".join(f"{name} {row[name]:.3f}" if row[name] is not None else f"{name} –"
                                    for name in FIGURES)
                print(f"  {row['source']}  {figures}")
        return code if summary else (code or 1)
    asyncio.run(add_sources(get_settings(), sources))
    print(f"{len(sources)} source pages sent to the watch list; a running `sourcewatch worker` revisits them "
          "(`sourcewatch watch --status` shows how they do)")
    return 0


def cmd_records(args: argparse.Namespace) -> int:
    from infra.clickhouse import sql_string
    from infra.sql_owner import read_clickhouse
    from streams.records_report import current_records

    query = (f"SELECT item_url, title, date, snippet, page_url, first_seen, last_seen FROM records "
             f"WHERE source_url = {sql_string(args.source)} "
             f"ORDER BY first_seen DESC, page_url, position LIMIT {args.limit}")
    try:
        columns, rows = read_clickhouse(get_settings(), query)
    except Exception as error:  # the database's message is what the user needs
        print(f"error: {error}", file=sys.stderr)
        return 1
    records = [dict(zip(columns, row)) for row in rows]
    if args.json:
        _print_json(records)
        return 0
    if not records:
        print(f"no records of {args.source} yet (is it a source page that was crawled with --sources?)")
        return 1
    print(f"{args.source}: {len(records)} records")
    print("\n".join(current_records(records)))
    return 0


# -- replay ----------------------------------------------------------------------------------------

def cmd_replay(args: argparse.Namespace) -> int:
    from streams.replay import replay_topic

    _ensure_local_kafka()
    result = asyncio.run(replay_topic(args.topic, Path(args.out), args.from_beginning, args.group,
                                      show_progress=sys.stderr.isatty()))
    _print_json(result) if args.json else print(
        f"{result['exported']} messages of {args.topic} → {args.out} ({result['invalid']} invalid skipped)")
    return 0


# -- serve-sites -----------------------------------------------------------------------------------

def cmd_serve_sites(args: argparse.Namespace) -> int:
    from infra.site_server import SiteServer, find_sites

    try:
        sites = find_sites([Path(path) for path in args.dirs])
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    def announce(homepages: dict[str, str]) -> None:
        if args.json:
            _print_json(homepages)
        else:
            for name, url in homepages.items():
                print(f"{name}\t{url}")

    return _serve_until_stopped(SiteServer(sites), announce)


# -- parser ----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sourcewatch", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    kafka = commands.add_parser("kafka", help="start, stop or inspect the local Kafka broker")
    kafka.add_argument("action", choices=["start", "stop", "status"])
    kafka.add_argument("--json", action="store_true", help="print one JSON object")
    kafka.set_defaults(func=cmd_kafka)

    worker = commands.add_parser("worker", help="run a worker with every agent until stopped (Ctrl-C)")
    worker.add_argument("--loglevel", default="info", choices=["debug", "info", "warning", "error"])
    worker.set_defaults(func=cmd_worker)

    crawl = commands.add_parser("crawl", help="crawl from seeds breadth-first through Kafka until idle")
    crawl.add_argument("--seeds", nargs="+", required=True, metavar="FILE|URL",
                       help="seed URLs, or files with one URL per line")
    crawl.add_argument("--max-pages", type=int, help="page budget per site (default: settings.crawl_max_pages)")
    crawl.add_argument("--depth", type=int, help="maximum clicks from a seed (default: settings.crawl_max_depth)")
    crawl.add_argument("--until-idle", action="store_true",
                       help="run until the pipeline is idle (the default; kept for scripts that say so)")
    crawl.add_argument("--time-limit", type=float, help="stop after this many seconds even if pages remain")
    crawl.add_argument("--sources", action="store_true",
                       help="the seeds are source (listing) pages: tag their pagination and follow it "
                            "(settings.pagination_max_pages per source), no breadth-first crawl")
    crawl.add_argument("--allow-loopback", action="store_true", help="allow fetching 127.0.0.0/8 (local snapshots)")
    crawl.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    crawl.set_defaults(func=cmd_crawl)

    discover = commands.add_parser("discover", help="from homepages, find each site's event/news listing page "
                                                    "with the discovery agent (through Kafka), then read and watch it")
    discover.add_argument("urls", nargs="*", metavar="URL", help="homepages")
    discover.add_argument("--homepages", metavar="FILE", help="a file of homepage URLs, one per line")
    discover.add_argument("--max-clicks", type=int, help="click budget per site (default: "
                                                         "settings.discovery_max_clicks, 10)")
    discover.add_argument("--time-limit", type=float, help="stop after this many seconds even if episodes remain")
    discover.add_argument("--allow-loopback", action="store_true", help="allow fetching 127.0.0.0/8")
    discover.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    discover.set_defaults(func=cmd_discover)

    demo = commands.add_parser("demo", help="the main job on a simulated web: Kafka, sites, workers, ClickHouse")
    demo.add_argument("--sites", type=int, default=20, help="simulated sites (default 20)")
    demo.add_argument("--duration", type=float, default=120.0, help="seconds to run (default 120)")
    demo.add_argument("--seed", type=int, default=1)
    demo.add_argument("--speed", type=float, default=3600.0, help="simulated seconds per real second")
    demo.add_argument("--watch", type=float, default=60.0,
                      help="seconds the revisit model watches the source pages found (default 60; 0 skips it)")
    demo.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    demo.set_defaults(func=cmd_demo)

    snapshots = commands.add_parser("crawl-snapshots", help="serve real site snapshots on loopback and crawl them")
    snapshots.add_argument("dirs", nargs="+", metavar="DIR", help="a site folder, or a folder of site folders")
    snapshots.add_argument("--max-pages", type=int)
    snapshots.add_argument("--depth", type=int)
    snapshots.add_argument("--time-limit", type=float)
    snapshots.add_argument("--json", action="store_true")
    snapshots.set_defaults(func=cmd_crawl_snapshots)

    simweb = commands.add_parser("simweb", help="serve the simulated web on 127.0.0.1 until stopped")
    simweb.add_argument("--sites", type=int, default=20)
    simweb.add_argument("--seed", type=int, default=1)
    simweb.add_argument("--speed", type=float, default=3600.0, help="simulated seconds per real second")
    simweb.add_argument("--json", action="store_true",
                        help="print one JSON object {control, sites: {name: homepage}} once serving")
    simweb.set_defaults(func=cmd_simweb)

    bench = commands.add_parser("bench", help="benchmarks: `bench crawl` compares the pipeline with Scrapy")
    bench.add_argument("kind", choices=["crawl", "fetch-parse", "scrapy", "tag", "revisit", "discovery"],
                       help="crawl: the side-by-side table; fetch-parse / scrapy: one run of that crawler alone; "
                            "tag: pagination tagging throughput; revisit: the revisit stage's cost per hour; "
                            "discovery: anchors scored per second by the discovery agent, cold and warm cache")
    bench.add_argument("--data", nargs="+", metavar="DIR",
                       help="pagination data to tag (tag; default <data>/pagination/prnsm); site folders "
                            "(discovery; default <data>/sites)")
    bench.add_argument("--model", help="pagination model (tag), revisit model (revisit) or discovery agent "
                                       "(discovery); default: the shipped one")
    bench.add_argument("--sources", type=int, default=100_000, help="watched source pages (revisit; default 100000)")
    bench.add_argument("--batch", type=int, default=1024, help="ticks per inference batch (revisit; default 1024)")
    bench.add_argument("--through-kafka", action="store_true",
                       help="revisit: a whole worker on the real broker, ticks sped up (use fewer --sources)")
    bench.add_argument("--speed", type=float, default=360.0,
                       help="revisit --through-kafka: the clock's speed-up (default 360: a tick every 10 s)")
    bench.add_argument("--seconds", type=float, default=60.0,
                       help="revisit --through-kafka: seconds measured after warm-up (default 60)")
    bench.add_argument("--sites", type=int, default=30, help="simulated sites (crawl; default 30)")
    bench.add_argument("--seed", type=int, default=42)
    bench.add_argument("--runs", type=int, default=3, help="runs per configuration (default 3)")
    bench.add_argument("--max-pages", type=int, default=200, help="page budget per site (default 200)")
    bench.add_argument("--no-snapshots", action="store_true", help="leave out <data>/sites")
    bench.add_argument("--seeds", nargs="+", metavar="FILE|URL", help="seeds (fetch-parse, scrapy)")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(func=cmd_bench)

    for name, helper, func in (("train", "train a model", cmd_train), ("eval", "evaluate a model", cmd_eval)):
        command = commands.add_parser(name, help=f"{helper} (pagination tagging, {'record extraction, ' * (name == 'eval')}"
                                                 "revisit scheduling, the discovery agent, the source-page "
                                                 "classifier)")
        command.add_argument("task", choices=["pagination", "records", "revisit", "discovery", "classifier"]
                             if name == "eval" else
                             ["pagination", "revisit", "discovery", "classifier"])
        command.add_argument("--data", nargs="+", metavar="DIR",
                             help="pagination: AutoPager/PRNSM folders, e.g. <data>/pagination/prnsm; records: one "
                                  "folder — <data>/records/estuka, <data>/records/city-scrapers or <data>/sites")
        command.add_argument("--language", nargs="*", help="keep only pages in these languages (e.g. en)")
        command.add_argument("--epochs", type=int, help="training epochs (default: the trainer's)")
        command.add_argument("--encoder", choices=["use", "laser", "e5", "none"], default="use",
                             help="pretrained text encoder beside the text n-grams (default use)")
        command.add_argument("--ablate", nargs="*", choices=FEATURE_GROUPS, help="leave these feature groups out")
        command.add_argument("--seed", type=int, help="training seed (shuffling, dropout; default: the trainer's)")
        if name == "eval":
            command.add_argument("--fold-seed", type=int, default=0,
                                 help="shuffles the domains into folds (default 0)")
        command.add_argument("--events", nargs="+", metavar="CSV",
                             help="revisit: update series, e.g. <data>/revisit/epa/events.csv")
        command.add_argument("--tick", choices=["1h", "1d"], default="1h", help="revisit: tick length (default 1h)")
        command.add_argument("--sites", nargs="+", metavar="DIR",
                             help="discovery, classifier: labelled site folders or folders of them, e.g. <data>/sites")
        if name == "eval":
            command.add_argument("--simweb", type=int, metavar="N",
                                 help="discovery: evaluate on N sites of the simulated web instead (held out)")
            command.add_argument("--simweb-seed", type=int, default=7,
                                 help="discovery: the simulated web's seed (default 7; the demo uses 1)")
        command.add_argument("--no-aux", action="store_true",
                             help="discovery: train the agent without the auxiliary box task (no Chromium needed)")
        command.add_argument("--stop-rule", choices=["out_of_fold", "eq5"], default="out_of_fold",
                             help="discovery: how the agent's stop threshold η is set — the fewest errors on "
                                  "training sites held out from brief agents (default), or the seed's Eq. 5 "
                                  "(eval with folds reports Eq. 5's figures beside the default's)")
        command.add_argument("--finetune-simweb", type=int, metavar="N",
                             help="discovery: after pre-training, fine-tune the agent on N sites of the simulated "
                                  "web with the source-page classifier as reward (Eq. 4; eval: in every fold, "
                                  "reported as rl_finetuned beside rl)")
        command.add_argument("--finetune-seed", type=int, default=3,
                             help="discovery: the fine-tuning web's seed (default 3; held-out evaluation uses 7)")
        command.add_argument("--finetune-epochs", type=int, help="discovery: fine-tuning epochs (default 30)")
        command.add_argument("--no-rehearse", action="store_true",
                             help="discovery: fine-tune on the simulated sites alone, without rehearsing the "
                                  "labelled ones (the seed's Eq. 4 as written)")
        if name == "train":
            command.add_argument("--out", required=True, help="model file to write")
            command.add_argument("--from", dest="start_from", metavar="PATH",
                                 help="discovery: fine-tune this saved agent instead of pre-training a new one")
            command.add_argument("--target", type=float, default=0.95,
                                 help="revisit: timeliness the threshold must reach on validation (default 0.95)")
        else:
            command.add_argument("--folds", type=int, help="domain-grouped cross-validation with K folds")
            command.add_argument("--train-language", nargs="+", metavar="LANG",
                                 help="zero-shot: train on these languages, test on every other")
            command.add_argument("--model", help="held-out: evaluate this model file (default: the shipped one)")
            command.add_argument("--baseline", choices=["autopager"], help="also train and score AutoPager")
            command.add_argument("--plot", metavar="PNG|PREFIX",
                                 help="revisit: write the timeliness–friendliness plane; discovery: the RL agent's "
                                      "PREFIX-learning.png and PREFIX-stopping.png")
            command.add_argument("--no-model", action="store_true",
                                 help="revisit: the baselines only (training the LSTM takes minutes)")
            command.add_argument("--policy", nargs="+", metavar="NAME",
                                 help="discovery: policies to run (default: rl, bfs, random, keyword, qlearning)")
            command.add_argument("--max-steps", type=int, default=10, help="discovery: click budget per site")
            command.add_argument("--extra-positives", metavar="DIR",
                                 help="classifier: add City Scrapers' listing pages (<data>/records/city-scrapers) "
                                      "to every training fold as source pages")
            command.add_argument("--per-source", action="store_true",
                                 help="revisit: also one model per source, as in the paper (minutes more)")
            command.add_argument("--json", action="store_true")
        command.set_defaults(func=func)

    retrain = commands.add_parser("retrain", help="retrain a model on the live observations replayed from Kafka, "
                                                  "and swap it in only if better")
    retrain.add_argument("task", choices=["revisit"])
    retrain.add_argument("--target", type=float, default=0.95,
                         help="timeliness the threshold must reach on validation (default 0.95)")
    retrain.add_argument("--dry-run", action="store_true", help="compare, but keep the current model")
    retrain.add_argument("--json", action="store_true")
    retrain.set_defaults(func=cmd_retrain)

    tag = commands.add_parser("tag", help="print the pagination links (PAGE, NEXT) of one page")
    tag.add_argument("target", metavar="URL|FILE", help="a page URL (fetched politely) or an HTML file")
    tag.add_argument("--model", help="pagination model file (default: the model shipped in the package)")
    tag.add_argument("--allow-loopback", action="store_true", help="allow fetching 127.0.0.0/8")
    tag.add_argument("--base-url", help="for a FILE: the URL its links resolve against (default: its canonical "
                                        "link or <base>, else links stay unresolved)")
    tag.add_argument("--json", action="store_true")
    tag.set_defaults(func=cmd_tag)

    sql = commands.add_parser("sql", help="run a ClickHouse query (tables: fetches, links, metrics, …)")
    sql.add_argument("query")
    sql.add_argument("--json", action="store_true", help="print rows as a JSON list of objects")
    sql.set_defaults(func=cmd_sql)

    watch = commands.add_parser("watch", help="add source pages to the revisit watch list, or show their figures")
    watch.add_argument("urls", nargs="*", metavar="URL", help="source pages to watch")
    watch.add_argument("--sources", metavar="FILE", help="a file of source page URLs, one per line")
    watch.add_argument("--status", action="store_true",
                       help="the live timeliness, friendliness, delay and fetches per item of each watched page")
    watch.add_argument("--run", type=float, metavar="SECONDS",
                       help="run a worker here for this long, then print the watched pages' figures")
    watch.add_argument("--json", action="store_true")
    watch.set_defaults(func=cmd_watch)

    records = commands.add_parser("records", help="print the current records of a source page (from ClickHouse)")
    records.add_argument("source", metavar="SOURCE_URL", help="the source page's URL, as crawled")
    records.add_argument("--limit", type=int, default=500, help="at most this many records (default 500)")
    records.add_argument("--json", action="store_true", help="print rows as a JSON list of objects")
    records.set_defaults(func=cmd_records)

    replay = commands.add_parser("replay", help="export a topic to JSONL or Parquet for offline training")
    replay.add_argument("topic", help="registry topic name, e.g. pages.fetched")
    replay.add_argument("--from-beginning", action="store_true",
                        help="export everything retained (default: continue after the group's last export)")
    replay.add_argument("--group", default="sourcewatch-replay", help="consumer group that remembers exports")
    replay.add_argument("--out", required=True, help="output file, .jsonl or .parquet")
    replay.add_argument("--json", action="store_true")
    replay.set_defaults(func=cmd_replay)

    serve = commands.add_parser("serve-sites", help="serve site snapshots on 127.0.0.1 until stopped")
    serve.add_argument("dirs", nargs="+", metavar="DIR", help="a site folder, or a folder of site folders")
    serve.add_argument("--json", action="store_true",
                       help="print one JSON object {site: homepage URL} once every site answers")
    serve.set_defaults(func=cmd_serve_sites)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.ERROR)
    if getattr(args, "allow_loopback", False):
        # Settings are read once, on first use: set it before anything reads them.
        os.environ["SOURCEWATCH_ALLOW_LOOPBACK"] = "true"
        get_settings.cache_clear()
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
