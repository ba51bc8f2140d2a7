"""`sourcewatch bench crawl`: sourcewatch's full pipeline, its fetch+parse path alone, and Scrapy,
on the same local sites with the same politeness and page budget, each run in a process of its own.

Sites: the simulated web (fixed seed, clock nearly still, no faults) plus the real
snapshots of <data>/sites when present. Each configuration runs `runs` times;
the table reports the median and the spread (min–max) of each figure.

The pipeline runs in the crawl command's own worker, or (`workers` N) as users scale out on one machine: a sink
worker and N processing workers started for each run, the crawl command beside them; its CPU seconds are then
the workers' over the run and the command's, its peak RSS the largest worker's.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from agents.fetching.fetcher import Fetcher
from agents.frontier import BfsFrontier
from agents.links import links_of
from infra.processes import cpu_seconds, serve_in_child
from infra.settings import Settings
from jobs.crawl import CrawlPlan, seed_requests
from jobs.worker_processes import Workers, joined
from schemas.crawl import CrawlRequest

CONFIGURATIONS = ("full", "fetch_parse", "scrapy")
# How long started workers may take to join their consumer groups.
JOIN_LIMIT_S = 180.0


# -- (b) fetch + parse without Kafka ---------------------------------------------------------------

async def crawl_without_kafka(plan: CrawlPlan, settings: Settings) -> dict:
    """The same fetcher, link extraction and BFS frontier as the pipeline, in one asyncio loop."""
    frontier = BfsFrontier({}, {})
    queue: asyncio.Queue[CrawlRequest] = asyncio.Queue()
    for request in seed_requests(plan, uuid.uuid4().hex):
        queue.put_nowait(request)
    pages = 0

    async with Fetcher.from_settings(settings) as fetcher:
        async def work() -> None:
            nonlocal pages
            while True:
                request = await queue.get()
                try:
                    page = await fetcher.fetch(request)
                    pages += 1
                    links = links_of(page)
                    if links is not None:
                        for planned in frontier.next_requests(links):
                            queue.put_nowait(planned)
                finally:
                    queue.task_done()

        started = time.monotonic()
        workers = [asyncio.create_task(work()) for _ in range(settings.global_concurrency)]
        await queue.join()
        seconds = time.monotonic() - started
        for worker in workers:
            worker.cancel()
    return {"pages_fetched": pages, "seconds": round(seconds, 3), "pages_per_s": round(pages / seconds, 2)}


# -- the side-by-side run --------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    pages_fetched: int
    pages_per_s: float
    cpu_seconds: float
    peak_rss_mb: float
    extra: dict


def _measure(argv: list[str], env: dict[str, str], timeout: float) -> Run:
    """Run `sourcewatch ARGV --json` as a child; its summary plus its own CPU time and peak RSS."""
    with tempfile.TemporaryFile(mode="w+") as errors:
        process = subprocess.Popen([sys.executable, "-m", "streams.cli", *argv, "--json"], env=env,
                                   stdout=subprocess.PIPE, stderr=errors, text=True)
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            out = process.stdout.read()
            # wait4 reaps this child and returns its own resource usage (not the other runs').
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"sourcewatch {' '.join(argv[:2])} failed ({process.returncode}): "
                               f"{errors.read().strip()[-2000:]}")
    summary = json.loads(out.strip().splitlines()[-1])
    return Run(summary["pages_fetched"], summary["pages_per_s"], usage.ru_utime + usage.ru_stime,
               usage.ru_maxrss / 1024, summary)


def _spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def _loopback_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    # Scrapy cannot honour robots.txt Crawl-delay (one snapshot asks for 10 s), so for equal
    # politeness none of the three does here; robots.txt rules are obeyed by all three.
    env.update(SOURCEWATCH_ALLOW_LOOPBACK="true", SOURCEWATCH_PER_HOST_DELAY_SECONDS="0",
               SOURCEWATCH_PER_HOST_CONCURRENCY="8", SOURCEWATCH_HONOUR_CRAWL_DELAY="false", **extra)
    return env


def _pipeline_run(seed_args: list[str], env: dict[str, str], timeout: float, workers: int, run_dir: Path) -> Run:
    """One run of `sourcewatch crawl`: in its own worker (`workers` 0), or beside a sink worker and `workers`
    processing workers started for it (their logs in `run_dir`)."""
    if not workers:
        return _measure(["crawl", *seed_args], env, timeout)
    from infra.kafka_broker import bootstrap_address
    from infra.settings import get_settings

    bootstrap, prefix = bootstrap_address(get_settings()), env["SOURCEWATCH_TOPIC_PREFIX"]
    pool = Workers(env, run_dir)
    try:
        pool.start("sink", "sink")
        for index in range(workers):
            pool.start(f"process-{index}", "process")
        deadline = time.monotonic() + JOIN_LIMIT_S
        while not joined(bootstrap, prefix, workers):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the workers did not join their groups in {JOIN_LIMIT_S:.0f} s"
                                   f"{_log_tails(run_dir)}")
            time.sleep(1)
        pool.sample()
        before = dict(pool.cpu)
        run = _measure(["crawl", *seed_args], env, timeout)
        pool.sample()
    finally:
        unclean = pool.stop_all()
    if unclean:
        raise RuntimeError(f"workers {', '.join(unclean)} did not stop cleanly{_log_tails(run_dir)}")
    used = {name: round(pool.cpu[name] - before.get(name, 0.0), 2) for name in pool.cpu}
    peaks = {name: round(mb) for name, mb in pool.peak_mb.items()}
    return Run(run.pages_fetched, run.pages_per_s, run.cpu_seconds + sum(used.values()), max(peaks.values()),
               run.extra | {"workers_cpu_s": used, "workers_peak_rss_mb": peaks})


def _log_tails(run_dir: Path, chars: int = 1500) -> str:
    """The end of each worker's log, for an error: the run's folder is removed when the benchmark ends."""
    return "".join(f"\n--- {log.name}:\n{log.read_text(errors='replace')[-chars:]}"
                   for log in sorted(run_dir.glob("*.log")))


def bench_crawl(sites: int, seed: int, runs: int, max_pages: int, snapshots: Path | None,
                timeout: float = 1800.0, progress=print, workers: int = 0) -> dict:
    """Serve the site set, crawl it `runs` times with each configuration, and compare (the pipeline in the crawl
    command's own worker, or beside a sink and `workers` processing workers)."""
    results: dict[str, list[Run]] = {name: [] for name in CONFIGURATIONS}
    with ExitStack() as stack:
        served = stack.enter_context(serve_in_child(["simweb", "--sites", str(sites), "--seed", str(seed),
                                                     "--speed", "1"]))
        seeds = list(served["sites"].values())
        if snapshots is not None and snapshots.is_dir():
            seeds += list(stack.enter_context(serve_in_child(["serve-sites", str(snapshots)])).values())
        seed_args = ["--seeds", *seeds, "--max-pages", str(max_pages)]
        for number in range(1, runs + 1):
            for name in CONFIGURATIONS:
                beside = f" beside a sink and {workers} processing worker(s)" if name == "full" and workers else ""
                progress(f"run {number}/{runs}: {name}{beside} over {len(seeds)} sites …")
                if name == "full":
                    # Fresh topics and ClickHouse per run, so runs do not see each other's messages.
                    run_dir = Path(stack.enter_context(_tempdir()))
                    env = _loopback_env(SOURCEWATCH_TOPIC_PREFIX=f"bench-{uuid.uuid4().hex[:8]}.",
                                        SOURCEWATCH_CLICKHOUSE_DSN=f"chdb://{run_dir / 'clickhouse'}")
                    broker_before = _broker_cpu_seconds()
                    run = _pipeline_run(seed_args, env, timeout, workers, run_dir)
                    broker_after = _broker_cpu_seconds()
                    run.extra["consumer_lag"] = asyncio.run(_lag(env, ("all", "sink") if workers else ("all",)))
                    run.extra["topics_deleted"] = _delete_run_topics(env)
                    # The broker's CPU over the run, beside the worker's own (the pipeline's Kafka work is both).
                    run.extra["broker_cpu_s"] = (round(broker_after - broker_before, 2)
                                                 if broker_before is not None and broker_after is not None else None)
                else:
                    run = _measure(["bench", name.replace("_", "-"), *seed_args], _loopback_env(), timeout)
                results[name].append(run)
    return _report(results, len(seeds), runs, max_pages, workers)


async def _lag(env: dict[str, str], roles: tuple[str, ...]) -> int:
    """Messages of the run's topics that its consumer groups (of the workers in `roles`) had not committed when
    they stopped — but for `metrics`: a stopping worker sends its last counts there after its consumer has
    stopped, for the next worker to store (agents.flush_metrics)."""
    from infra.kafka_topics import consumer_group, consumer_lag
    from schemas.registry import TOPICS

    prefix, bootstrap = env["SOURCEWATCH_TOPIC_PREFIX"], _bootstrap(env)
    topics = [f"{prefix}{name}" for name in TOPICS if name != "metrics"]
    return sum([await consumer_lag(bootstrap, consumer_group(prefix, role), topics) for role in roles])


def _delete_run_topics(env: dict[str, str]) -> int:
    """Delete the run's topics (about 36 of eight partitions): left on the user's broker they add up run after run,
    and every client of it decodes them all in each metadata response."""
    from infra.kafka_topics import delete_topics

    return len(asyncio.run(delete_topics(_bootstrap(env), env["SOURCEWATCH_TOPIC_PREFIX"])))


def _bootstrap(env: dict[str, str]) -> str:
    from infra.kafka_broker import bootstrap_address
    from infra.settings import get_settings

    return env.get("SOURCEWATCH_KAFKA_BOOTSTRAP") or bootstrap_address(get_settings())


def _broker_cpu_seconds() -> float | None:
    """The local broker's CPU seconds so far; None where the pipeline's broker is not the project's local one
    (a broker elsewhere is not measured)."""
    from infra.kafka_broker import LocalKafka, bootstrap_address
    from infra.settings import get_settings

    settings = get_settings()
    state = LocalKafka.from_settings(settings).state()
    if state is None or state.bootstrap != bootstrap_address(settings):
        return None
    return cpu_seconds(state.pid)


def _tempdir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="sourcewatch-bench-")


def _report(results: dict[str, list[Run]], site_count: int, runs: int, max_pages: int, workers: int) -> dict:
    def figure(name: str, attribute: str) -> dict:
        return _spread([getattr(run, attribute) for run in results[name]])

    def per_page(name: str) -> dict:
        return _spread([run.cpu_seconds / max(run.pages_fetched, 1) for run in results[name]])

    full, fetch_parse, scrapy = (figure(name, "pages_per_s")["median"] for name in CONFIGURATIONS)
    full_runs = results["full"]
    return {
        "sites": site_count,
        "runs": runs,
        "max_pages_per_site": max_pages,
        # 0: the crawl command's own worker; else the processing workers beside a sink worker.
        "full_workers": workers,
        "full_pages_per_s": full,
        "fetch_parse_pages_per_s": fetch_parse,
        "scrapy_pages_per_s": scrapy,
        "ratio_full_vs_scrapy": round(full / scrapy, 3) if scrapy else None,
        "ratio_fetch_parse_vs_scrapy": round(fetch_parse / scrapy, 3) if scrapy else None,
        "configurations": {
            name: {
                "pages_fetched": figure(name, "pages_fetched"),
                "pages_per_s": figure(name, "pages_per_s"),
                "cpu_seconds_per_page": per_page(name),
                "peak_rss_mb": figure(name, "peak_rss_mb"),
            }
            for name in CONFIGURATIONS
        },
        "full_fetch_to_clickhouse_ms_p50": _spread([r.extra["fetch_to_clickhouse_ms_p50"] for r in full_runs]),
        "full_fetch_to_clickhouse_ms_p99": _spread([r.extra["fetch_to_clickhouse_ms_p99"] for r in full_runs]),
        "full_consumer_lag_at_end": _spread([r.extra["consumer_lag"] for r in full_runs]),
        "full_topics_deleted": _spread([r.extra["topics_deleted"] for r in full_runs]),
        # None where the broker is not the local one.
        "full_broker_cpu_s": (_spread([r.extra["broker_cpu_s"] for r in full_runs])
                              if all(r.extra["broker_cpu_s"] is not None for r in full_runs) else None),
    } | ({
        # Each started worker's own CPU seconds over the run and peak RSS (the configuration's are their sum and
        # the largest).
        "full_workers_cpu_s": {name: _spread([r.extra["workers_cpu_s"][name] for r in full_runs])
                               for name in full_runs[0].extra["workers_cpu_s"]},
        "full_workers_peak_rss_mb": {name: _spread([r.extra["workers_peak_rss_mb"][name] for r in full_runs])
                                     for name in full_runs[0].extra["workers_peak_rss_mb"]},
    } if workers else {})


def print_table(report: dict) -> None:
    rows = [("configuration", "pages", "pages/s (median, min–max)", "CPU s/page", "peak RSS MB")]
    for name, figures in report["configurations"].items():
        rate = figures["pages_per_s"]
        rows.append((name, str(figures["pages_fetched"]["median"]),
                     f"{rate['median']} ({rate['min']}–{rate['max']})",
                     f"{figures['cpu_seconds_per_page']['median']:.4f}", f"{figures['peak_rss_mb']['median']:.0f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    print(f"full / scrapy = {report['ratio_full_vs_scrapy']}, fetch+parse / scrapy = "
          f"{report['ratio_fetch_parse_vs_scrapy']}; full fetch→ClickHouse p50/p99 = "
          f"{report['full_fetch_to_clickhouse_ms_p50']['median']} / {report['full_fetch_to_clickhouse_ms_p99']['median']} ms; "
          f"consumer lag at end = {report['full_consumer_lag_at_end']['median']}")
    if report["full_workers"]:
        print(f"full: beside a sink and {report['full_workers']} processing worker(s); CPU s per run "
              + ", ".join(f"{name} {spread['median']}" for name, spread in report["full_workers_cpu_s"].items()))
    if report["full_broker_cpu_s"] is not None:
        print(f"full: the broker's CPU {report['full_broker_cpu_s']['median']} s per run (the worker's: CPU s/page "
              "× pages above)")
