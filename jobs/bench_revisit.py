"""`sourcewatch bench revisit`: what one hour of ticks for N watched source pages costs the revisit stage —
in process (the stage's own code), and with `--through-kafka` a whole worker on the real broker.

It runs the stage's own code on one CPU thread, in process, for every source once (one hour at 1-hour ticks):
the timer's pass over the watch table, each tick encoded and decoded as on Kafka, each source's state read
and written as JSON (the table's value), batched inference, decisions and revisit requests encoded. Not
included: Kafka's own transport (client and broker) and the revisits' fetches and reads, which are the
fetch and record stages' work. The CPU share is the stage's CPU seconds per hour of ticks over 3,600.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from agents.page_knowledge import learn_read
from agents.revisit import RevisitClock, WatchedSource, decide, start_watching, tick_message
from infra.processes import cpu_seconds
from infra.settings import get_settings
from models.revisit.rhythm_model import RhythmLSTM
from models.revisit.schedule import starvation_ticks
from schemas.registry import decode, encode


def _watch_table(model: RhythmLSTM, sources: int, now: int, seed: int, clock: RevisitClock) -> dict[str, dict]:
    """Watched sources as the table holds them, each bootstrapped from a first read listing 20 dated items."""
    rng = random.Random(seed)
    table = {}
    for n in range(sources):
        source = start_watching(f"https://site{n % 5000}.example/events/{n}", f"site{n % 5000}.example", now - 1)
        listed = [clock.tick_time(now - 1 - rng.randint(0, 24 * 60)) for _ in range(20)]
        learn_read(source, model.prior, now - 1, listed, first=True)
        table[source.page_url] = source.model_dump(mode="json")
    return table


def _one_hour(model: RhythmLSTM, table: dict[str, dict], now: int, batch: int, clock: RevisitClock) -> dict:
    started_cpu, started = time.process_time(), time.perf_counter()
    # The timer's pass: due sources → tick messages.
    ticks = [encode(tick_message(WatchedSource.model_validate(value), now, clock))
             for value in table.values() if value["last_tick"] < now]
    inference = 0.0
    decided = fetched = 0
    bound = starvation_ticks(get_settings().revisit_max_interval_hours, clock.tick_hours)
    for start in range(0, len(ticks), batch):
        due = []
        for raw in ticks[start:start + batch]:
            tick = decode("revisit.ticks", raw)
            due.append((WatchedSource.model_validate(table[tick.page_url]), tick))
        began = time.perf_counter()
        decisions = decide(model, due, clock, bound)
        inference += time.perf_counter() - began
        for (source, _), decision in zip(due, decisions):
            table[source.page_url] = source.model_dump(mode="json")
            encode(decision.message)
            if decision.request is not None:
                encode(decision.request)
                fetched += 1
        decided += len(decisions)
    cpu, wall = time.process_time() - started_cpu, time.perf_counter() - started
    return {"decisions": decided, "fetches": fetched, "cpu_s": cpu, "wall_s": wall, "inference_s": inference}


def bench_revisit(model: RhythmLSTM, sources: int, batch: int, runs: int, seed: int = 7,
                  progress: Callable[[str], None] | None = None) -> dict:
    torch.set_num_threads(1)
    clock = RevisitClock(tick_hours=model.tick_hours)
    now = clock.tick()
    table = _watch_table(model, sources, now, seed, clock)
    hours = []
    for run in range(runs):
        hours.append(_one_hour(model, table, now + run, batch, clock))
        if progress:
            progress(f"hour {run + 1}/{runs}: {hours[-1]['cpu_s']:.1f} CPU s")
    cpu = statistics.median(hour["cpu_s"] for hour in hours)
    inference = statistics.median(hour["inference_s"] for hour in hours)
    return {
        "sources": sources, "batch": batch, "runs": runs, "model": model.version, "threads": 1,
        "decisions_per_hour": hours[0]["decisions"], "fetches_per_hour": statistics.median(h["fetches"] for h in hours),
        "cpu_s_per_hour": round(cpu, 2),
        "cpu_share_of_one_core": round(cpu / 3600, 4),
        "decisions_per_s_inference": round(sources / inference),
        "decisions_per_s_stage": round(sources / cpu),
        "included": "timer pass, tick encode/decode, state JSON read/write, batched inference, decision and "
                    "request encoding (one thread); not Kafka transport, not the revisits' fetches",
    }


def _worker_cpu_seconds(pid: int) -> float:
    if (cpu := cpu_seconds(pid)) is None:
        raise RuntimeError(f"the benchmark's worker (pid {pid}) has exited before its CPU time was read")
    return cpu


def bench_revisit_through_kafka(model_path: Path, sources: int, speed: float, seconds: float, workdir: Path,
                                progress: Callable[[str], None] | None = None) -> dict:
    """A real worker (every agent, real broker, chDB sink) watching `sources` pages whose ticks come `speed`
    times faster than real time; the model never fetches (threshold above 1), so the worker's CPU is the
    revisit stage's with its Kafka and Faust transport and the decisions' sink (no exploration either; each
    page's first read, at its watch's start, falls in the warm-up). The CPU per decision, times
    one decision per page and hour, gives the share of a core for 100,000 pages at 1-hour ticks."""
    from infra.kafka_broker import bootstrap_address, first_free_port
    from infra.kafka_topics import delete_topics
    from infra.settings import get_settings
    from jobs.watch import add_sources, watch_requests
    settings = get_settings()
    model = RhythmLSTM.load(model_path)
    model.threshold = 1.01
    model.save(workdir / "never-fetch.pt")
    env = os.environ | {
        "SOURCEWATCH_KAFKA_BOOTSTRAP": bootstrap_address(settings),
        "SOURCEWATCH_TOPIC_PREFIX": f"bench{int(time.time())}.",
        "SOURCEWATCH_CLICKHOUSE_DSN": f"chdb://{workdir / 'clickhouse'}",
        "SOURCEWATCH_WEB_PORT": str(first_free_port(settings.web_port + 100)),
        "SOURCEWATCH_REVISIT_MODEL": str(workdir / "never-fetch.pt"),
        "SOURCEWATCH_REVISIT_EXPLORATION_SHARE": "0",
        "SOURCEWATCH_REVISIT_CLOCK_ORIGIN": "2026-01-05T00:00:00+00:00",
        "SOURCEWATCH_REVISIT_CLOCK_ORIGIN_WALL": str(time.time()),
        "SOURCEWATCH_REVISIT_CLOCK_SPEED": str(speed),
    }
    urls = [f"https://site{n % 5000}.example/events/{n}" for n in range(sources)]
    prefixed = settings.model_copy(update={"topic_prefix": env["SOURCEWATCH_TOPIC_PREFIX"]})
    asyncio.run(add_sources(prefixed, watch_requests(urls)))
    worker = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--loglevel", "error"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def decided() -> int:
        done = subprocess.run([sys.executable, "-m", "streams.cli", "sql", "SELECT count() AS n FROM revisit_decisions",
                               "--json"], env=env, capture_output=True, text=True, timeout=60)
        return json.loads(done.stdout)[0]["n"] if done.returncode == 0 and done.stdout.strip() else 0

    try:
        warm_up = time.monotonic() + 120
        while decided() < sources and time.monotonic() < warm_up:  # started, recovered, first ticks decided
            time.sleep(2)
        first_cpu, first_count, started = _worker_cpu_seconds(worker.pid), decided(), time.monotonic()
        if progress:
            progress(f"warmed up: {first_count} decisions; measuring {seconds:.0f} s")
        time.sleep(seconds)
        cpu, count, elapsed = _worker_cpu_seconds(worker.pid) - first_cpu, decided() - first_count, \
            time.monotonic() - started
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
        # The run's topics would stay on the user's broker, adding up run after run.
        asyncio.run(delete_topics(env["SOURCEWATCH_KAFKA_BOOTSTRAP"], env["SOURCEWATCH_TOPIC_PREFIX"]))
    per_decision = cpu / count if count else None
    return {
        "sources": sources, "speed": speed, "seconds": round(elapsed, 1), "decisions": count,
        "decisions_per_s": round(count / elapsed, 1), "worker_cpu_s": round(cpu, 2),
        "cpu_ms_per_decision": round(per_decision * 1000, 3) if per_decision else None,
        "cpu_share_of_one_core_100k_at_1h": round(per_decision * 100_000 / 3600, 4) if per_decision else None,
        "included": "a whole worker: timer, ticks and decisions through the real broker, Faust table changelog, "
                    "batched inference, the decisions' ClickHouse sink; no revisit fetches (threshold > 1)",
    }
