"""`sourcewatch bench revisit`: what one hour of ticks for N watched source pages costs the revisit stage.

It runs the stage's own code on one CPU thread, in process, for every source once (one hour at 1-hour ticks):
the timer's pass over the watch table, each tick encoded and decoded as on Kafka, each source's state read
and written as JSON (the table's value), batched inference, decisions and revisit requests encoded. Not
included: Kafka's own transport (client and broker) and the revisits' fetches and reads, which are the
fetch and record stages' work. The CPU share is the stage's CPU seconds per hour of ticks over 3,600.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

import torch

from agents.revisit import RevisitClock, WatchedSource, decide, start_watching, tick_message
from models.revisit_model import WINDOW, UpdatePredictor
from schemas.registry import decode, encode


def _watch_table(sources: int, now: int, seed: int) -> dict[str, dict]:
    """Watched sources as the table holds them, each with a few recent update ticks."""
    rng = random.Random(seed)
    table = {}
    for n in range(sources):
        source = start_watching(f"https://site{n % 5000}.example/events/{n}", f"site{n % 5000}.example", now - 1)
        source.updated_ticks = sorted(rng.sample(range(now - WINDOW, now), rng.randint(0, 3)))
        table[source.page_url] = source.model_dump(mode="json")
    return table


def _one_hour(model: UpdatePredictor, table: dict[str, dict], now: int, batch: int, clock: RevisitClock) -> dict:
    started_cpu, started = time.process_time(), time.perf_counter()
    # The timer's pass: due sources → tick messages.
    ticks = [encode(tick_message(WatchedSource.model_validate(value), now, clock))
             for value in table.values() if value["last_tick"] < now]
    inference = 0.0
    decided = fetched = 0
    for start in range(0, len(ticks), batch):
        due = []
        for raw in ticks[start:start + batch]:
            tick = decode("revisit.ticks", raw)
            due.append((WatchedSource.model_validate(table[tick.page_url]), tick))
        began = time.perf_counter()
        decisions = decide(model, due, clock)
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


def bench_revisit(model: UpdatePredictor, sources: int, batch: int, runs: int, seed: int = 7,
                  progress: Callable[[str], None] | None = None) -> dict:
    torch.set_num_threads(1)
    clock = RevisitClock(tick_hours=model.tick_hours)
    now = clock.tick()
    table = _watch_table(sources, now, seed)
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
