"""`sourcewatch soak`: the monitoring loop at scale and through faults, measured against the simulated web's truth.

The simulated web (N sites, real update series) runs on a sped-up clock; a sink worker and W processing
workers (`worker --role`, child processes) watch every site's source page — seeded straight into the watch list,
but for a share of the sites (the last ones; those without a source page too) whose homepages go to discovery
through the same workers, so their source pages are watched only as discovery finds them — for D simulated days. While it runs: each process's CPU seconds and memory (the broker's too, when it is the
local one `sourcewatch kafka` runs), and each consumer group's lag. With faults, one process down at a time
for `down_seconds` (30 by default): a processing worker SIGKILLed, then the sink worker, then the local broker
stopped (the workers must reconnect on their own); a share of sites answer 429/503 storms, hang, trap crawlers,
send broken encodings or huge pages for a
part of the run. Afterwards, once the groups have drained, the stored rows are held against the truth
(jobs.soak_truth, where each figure is defined).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from aiokafka.errors import KafkaError

from infra.kafka_broker import LocalKafka, bootstrap_address
from infra.kafka_topics import consumer_group, delete_topics, lag_by_topic
from infra.processes import die_with_parent, serve_in_child
from infra.settings import Settings
from infra.sql_owner import read_clickhouse
from jobs.replay import read_topic
from jobs.simweb_control import control_json, simulated_clock
from jobs.soak_truth import against_truth, found_by_discovery, politeness
from jobs.worker_processes import Workers, joined

log = logging.getLogger(__name__)

SAMPLE_SECONDS = 2.0
# The share of sites the simulated web's faults hit, and the part of the window they last.
FAULTY_SHARE = 0.1
FAULT_WINDOW = (0.6, 0.75)
# When in the window a processing worker, then the sink worker, is killed, and the local broker stopped (each
# waits until the one before is back).
KILL_PROCESSING_AT, KILL_SINK_AT, RESTART_BROKER_AT = 0.25, 0.45, 0.55
DRAIN_LIMIT_SECONDS = 600.0
LAG_TIMEOUT_SECONDS = 30.0
SITE_FAULTS = ({"status": 429, "status_rate": 0.8}, {"status": 503, "status_rate": 0.5}, {"hang": True},
               {"traps": True}, {"broken_encoding": True}, {"huge": True})


@dataclass(frozen=True)
class SoakPlan:
    sites: int
    days: float
    workers: int
    faults: bool
    speed: float
    seed: int
    run_dir: Path
    # How long a killed worker, and the stopped broker, stay down.
    down_seconds: float = 30.0
    # The share of sites whose source pages must be found by discovery rather than seeded.
    discovery_share: float = 0.1
    # The run's topics stay on the broker (to replay them); by default they are deleted once its figures are
    # read: each run makes its own (~270 partitions), and a broker that keeps them all restarts ever slower.
    keep_topics: bool = False


def _lags(bootstrap: str, prefix: str) -> dict[str, int] | None:
    """Each group's lag over its topics; None when the broker did not tell in time (an admin request to a
    broker that has just come back can wait for good)."""

    async def lags() -> dict[str, int]:
        return {role: sum((await lag_by_topic(bootstrap, consumer_group(prefix, role))).values())
                for role in ("all", "sink")}

    try:
        return asyncio.run(asyncio.wait_for(lags(), LAG_TIMEOUT_SECONDS))
    except (TimeoutError, KafkaError, OSError) as error:
        log.warning("consumer lags not read (%s); asked again at the next sample", error or type(error).__name__)
        return None


def _set_faults(control: str, faults: dict) -> None:
    request = urllib.request.Request(control + "/__faults__", data=json.dumps(faults).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=60).close()


def run_soak(plan: SoakPlan, settings: Settings, progress: Callable[[str], None] = lambda _: None) -> dict:
    """Run the soak (see the module) on the settings' broker and ClickHouse; its figures."""
    plan.run_dir.mkdir(parents=True, exist_ok=True)
    bootstrap, prefix = bootstrap_address(settings), settings.topic_prefix
    env = dict(os.environ)
    window = plan.days * 86400 / plan.speed
    with ExitStack() as stack:
        web = stack.enter_context(serve_in_child(["simweb", "--sites", str(plan.sites), "--seed", str(plan.seed),
                                                  "--speed", str(plan.speed)], env, timeout=300))
        control = web["control"]
        clock = simulated_clock(control)
        origin_sim = datetime.fromisoformat(clock["SOURCEWATCH_REVISIT_CLOCK_ORIGIN"])
        origin_wall = float(clock["SOURCEWATCH_REVISIT_CLOCK_ORIGIN_WALL"])
        env |= clock | {"SOURCEWATCH_PER_HOST_DELAY_SECONDS": f"{settings.per_host_delay_seconds / plan.speed:.6f}"}
        truth = control_json(control + "/__truth__")
        to_discover = sorted(truth)[len(truth) - round(plan.discovery_share * len(truth)):] \
            if plan.discovery_share > 0 else []
        pages = [source["url"] for name, site in truth.items() if name not in to_discover
                 for source in site["source_pages"]]
        workers = Workers(env, plan.run_dir)
        stack.callback(workers.stop_all)
        workers.start("sink", "sink")
        for index in range(plan.workers):
            workers.start(f"process-{index}", "process")
        progress(f"{plan.sites} simulated sites, {len(pages)} source pages; starting the sink and "
                 f"{plan.workers} processing worker(s)")
        deadline = time.monotonic() + 180
        while not joined(bootstrap, prefix, plan.workers):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the workers did not join their groups in 180 s (logs in {plan.run_dir})")
            time.sleep(1)
        seeded = subprocess.run([sys.executable, "-m", "streams.cli", "watch", *pages], env=env,
                                capture_output=True, text=True, timeout=300)
        if seeded.returncode != 0:
            raise RuntimeError(f"seeding the watch list failed: {seeded.stderr.strip()[-2000:]}")
        discovery = _discover([truth[name]["homepage"] for name in to_discover], env, plan.run_dir)
        progress(f"{len(pages)} pages watched, {len(to_discover)} sites' homepages in discovery; running "
                 f"{plan.days:g} simulated days ({window:.0f} s)")
        broker = LocalKafka.from_settings(settings)
        broker_state = broker.state()
        local_broker = broker_state is not None and broker_state.bootstrap == bootstrap
        if local_broker:
            workers.observe("broker", broker_state.pid)
        began = time.monotonic()
        max_lag: dict[str, int] = {"all": 0, "sink": 0}
        pending = sorted([(KILL_PROCESSING_AT, "kill", "process-0"), (KILL_SINK_AT, "kill", "sink"),
                          (FAULT_WINDOW[0], "faults on", ""), (FAULT_WINDOW[1], "faults off", "")]
                         + ([(RESTART_BROKER_AT, "stop broker", "broker")] if local_broker else [])) \
            if plan.faults else []
        restarts: list[tuple[float, str, str]] = []
        faulty = sorted(truth)[: max(1, round(FAULTY_SHARE * len(truth)))]
        while (elapsed := time.monotonic() - began) < window:
            share = elapsed / window
            # One process down at a time: a kill waits until the last one killed is back in its group (a sink
            # restarted just as the broker stopped failed its bootstrap and exited).
            while pending and pending[0][0] <= share and (pending[0][1].startswith("faults") or (
                    not restarts and joined(bootstrap, prefix, plan.workers))):
                _, action, name = pending.pop(0)
                if action == "kill":
                    progress(f"SIGKILL {name} at {share:.0%} of the window; restarted in "
                             f"{plan.down_seconds:.0f} s")
                    workers.kill(name, share)
                    restarts.append((time.monotonic() + plan.down_seconds, name,
                                     "sink" if name == "sink" else "process"))
                elif action == "stop broker":
                    progress(f"the broker stops at {share:.0%} of the window; started again in "
                             f"{plan.down_seconds:.0f} s")
                    workers.sample()
                    broker.stop()
                    workers.kills.append({"worker": "broker", "at_share": round(share, 2)})
                    restarts.append((time.monotonic() + plan.down_seconds, "broker", "broker"))
                elif action == "faults on":
                    progress(f"faults on {len(faulty)} sites")
                    _set_faults(control, {site: SITE_FAULTS[i % len(SITE_FAULTS)] for i, site in enumerate(faulty)})
                else:
                    progress("faults cleared")
                    _set_faults(control, {site: {} for site in faulty})
            for due, name, role in list(restarts):
                if time.monotonic() >= due:
                    if name == "broker":
                        _restart_broker(broker, broker_state, workers)
                    else:
                        workers.start(name, role)
                    restarts.remove((due, name, role))
            workers.sample()
            if not any(name == "broker" for _, name, _ in restarts):
                for role, lag in (_lags(bootstrap, prefix) or {}).items():
                    max_lag[role] = max(max_lag[role], lag)
            time.sleep(SAMPLE_SECONDS)
        end_sim = datetime.fromisoformat(control_json(control + "/__clock__")["now"])
        # The watch never pauses (each tick makes new work), so the window ends by stopping the processing
        # workers; what they produced the sink then drains.
        progress("window over: the processing workers stop, the sink drains")
        for _, name, role in restarts:
            if name == "broker":
                _restart_broker(broker, broker_state, workers)
            else:
                workers.start(name, role)
        discovered = _discovery_ended(discovery, plan.run_dir)
        unclean = workers.stop_all("process")
        drain_began = time.monotonic()
        while ((lags := _lags(bootstrap, prefix)) is None or lags["sink"]) \
                and time.monotonic() - drain_began < DRAIN_LIMIT_SECONDS:
            workers.sample()
            time.sleep(SAMPLE_SECONDS)
        drained = round(time.monotonic() - drain_began, 1)
        unclean += workers.stop_all("sink")
        visits = control_json(control + "/__visits__")
    decisions_on_topic = asyncio.run(read_topic("revisit.decisions", True, "sourcewatch-soak"))[0]
    found, watched_pages = found_by_discovery(settings, truth, to_discover)
    found["run"] = discovered
    pages += watched_pages
    figures = against_truth(settings, truth, pages, origin_sim, origin_wall, plan.speed, end_sim)
    ticks = Counter((decision.page_url, decision.tick_at) for decision in decisions_on_topic)
    twice = {tick for tick, count in ticks.items() if count > 1}
    topics_deleted = 0 if plan.keep_topics else len(asyncio.run(delete_topics(bootstrap, prefix)))
    return {
        "sites": plan.sites, "days": plan.days, "workers": plan.workers, "faults": plan.faults, "speed": plan.speed,
        "watched": len(pages), "discovery": found, "window_s": round(window, 1),
        "decisions_per_s": round(len(decisions_on_topic) / window, 1),
        "revisits_per_s": round(sum(decision.fetch for decision in decisions_on_topic) / window, 1),
        **figures, "fetches_per_s": round(figures["fetches"] / window, 1),
        "ticks_decided_twice": len(twice),
        # Each such decision as sent (one event id twice: one decision delivered twice; two: decided twice), for
        # tracing it after the run's topics are deleted.
        "ticks_decided_twice_examples": [
            {"page": decision.page_url, "tick": decision.tick_at.isoformat(), "event_id": decision.event_id,
             "made": decision.created_at.isoformat(), "fetch": decision.fetch}
            for decision in decisions_on_topic if (decision.page_url, decision.tick_at) in twice][:20],
        # Ticks the deciding worker dropped as already decided (sent again: after a restart, or by a worker
        # that had just given the page up) — work, not loss.
        "ticks_sent_again": _ticks_sent_again(settings),
        "max_lag": max_lag, "sink_drain_s": drained, "kills": workers.kills, "unclean_exits": unclean,
        "broker_restarted": any(kill["worker"] == "broker" for kill in workers.kills)
        if local_broker else "no: not the local broker",
        "politeness": politeness(visits, settings.per_host_concurrency,
                                 settings.per_host_delay_seconds / plan.speed, _under_way(settings, truth)),
        "cpu_s": {name: round(value, 1) for name, value in workers.cpu.items()},
        "peak_rss_mb": {name: round(value) for name, value in workers.peak_mb.items()},
        "memory_growth": workers.memory_growth(),
        "topics_deleted": topics_deleted, "run_dir": str(plan.run_dir),
    }


def _ticks_sent_again(settings: Settings) -> int:
    _, rows = read_clickhouse(settings, "SELECT sum(value) FROM metrics WHERE name = 'duplicate_ticks'")
    return int(rows[0][0] or 0) if rows else 0


def _under_way(settings: Settings, truth: dict) -> dict[str, int]:
    """By site: the requests the fetchers had under way when they read one of its Retry-Afters."""
    _, rows = read_clickhouse(settings, "SELECT labels['host'], sum(value) FROM metrics "
                                        "WHERE name = 'requests_under_way_at_retry_after' GROUP BY 1")
    by_host = {host: int(count) for host, count in rows}
    return {name: count for name, site in truth.items()
            if (count := by_host.get(urlsplit(site["homepage"]).netloc, 0))}


def _discover(homepages: list[str], env: dict[str, str], run_dir: Path) -> subprocess.Popen | None:
    """`sourcewatch discover` on the homepages, on the running workers, beside the watch (its output in the run
    directory)."""
    if not homepages:
        return None
    return subprocess.Popen([sys.executable, "-m", "streams.cli", "discover", *homepages, "--json"], env=env,
                            stdout=(run_dir / "discover.json").open("w"), stderr=(run_dir / "discover.log").open("w"),
                            text=True, preexec_fn=die_with_parent)


def _discovery_ended(process: subprocess.Popen | None, run_dir: Path) -> dict:
    """How the discovery command ended (it follows its crawl until idle; killed here if it still runs): its exit
    code, episodes and their ends."""
    if process is None:
        return {}
    try:
        code = process.wait(timeout=DRAIN_LIMIT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        return {"exit": "still running after the window and the drain limit: killed"}
    try:
        episodes = json.loads((run_dir / "discover.json").read_text().strip().splitlines()[-1])["episodes"]
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return {"exit": code, "episodes": None}
    return {"exit": code, "episodes": len(episodes),
            "ends": dict(Counter(episode.get("end", "?") for episode in episodes))}


def _restart_broker(broker: LocalKafka, before, workers: Workers) -> None:
    """Start the local broker again, on its port (the workers reconnect to the address they know)."""
    state = broker.start()
    if state.port != before.port:
        raise RuntimeError(f"the broker came back on port {state.port}, not {before.port}: the workers cannot "
                           "reach it")
    workers.observe("broker", state.pid)
