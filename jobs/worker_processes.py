"""Worker processes a job starts beside itself (`worker --role`, child processes), as users scale out on one
machine: the soak's sink and processing workers, the crawl benchmark's. Each process's CPU seconds and memory are
followed over its lives (a restart is a new life), the local broker's too when it is named."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from infra.kafka_broker import first_free_port
from infra.kafka_topics import consumer_group, group_members, worker_client_id
from infra.processes import cpu_seconds, die_with_parent


def _process_usage(pid: int) -> tuple[float, float, float] | None:
    """(CPU seconds, peak resident MB, resident MB now) of a live process, from /proc; None when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    if (cpu := cpu_seconds(pid)) is None:
        return None
    memory = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in status.splitlines()
              if line.startswith(("VmHWM:", "VmRSS:"))}
    return cpu, memory.get("VmHWM", 0.0), memory.get("VmRSS", 0.0)


class Workers:
    """A job's worker processes by name; each one's usage summed over its lives (a restart is a new life).
    A process it did not start (the local broker) is observed from the moment it is named: its CPU from then,
    its largest resident size sampled (its own peak would reach back before the job)."""

    def __init__(self, env: dict[str, str], run_dir: Path) -> None:
        self.env, self.run_dir = env, run_dir
        self.running: dict[str, subprocess.Popen] = {}
        self.observed: dict[str, int] = {}
        self.cpu: dict[str, float] = defaultdict(float)
        self.peak_mb: dict[str, float] = defaultdict(float)
        # Resident MB at each sample, per process: whether memory stays bounded over the run.
        self.rss_mb: dict[str, list[float]] = defaultdict(list)
        self._last: dict[str, float] = {}
        self.kills: list[dict] = []
        self.ports: dict[str, int] = {}

    def observe(self, name: str, pid: int) -> None:
        usage = _process_usage(pid)
        if usage is not None:
            self.observed[name], self._last[name] = pid, usage[0]

    def start(self, name: str, role: str) -> None:
        # Workers starting at once would each take the first free web port: each gets its own, kept on restart.
        if name not in self.ports:
            self.ports[name] = first_free_port(int(self.env.get("SOURCEWATCH_WEB_PORT", "6066")),
                                               exclude=frozenset(self.ports.values()))
        log = (self.run_dir / f"{name}.log").open("a")
        self.running[name] = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "--role", role,
                                               "--loglevel", "warning"], stdout=log, stderr=subprocess.STDOUT,
                                              env=self.env | {"SOURCEWATCH_WEB_PORT": str(self.ports[name])},
                                              preexec_fn=die_with_parent)
        self._last[name] = 0.0

    def sample(self) -> None:
        pids = {name: process.pid for name, process in self.running.items()} | self.observed
        for name, pid in pids.items():
            usage = _process_usage(pid)
            if usage is not None:
                cpu, peak, now = usage
                self.cpu[name] += cpu - self._last[name]
                self._last[name] = cpu
                self.peak_mb[name] = max(self.peak_mb[name], now if name in self.observed else peak)
                self.rss_mb[name].append(now)

    def memory_growth(self) -> dict[str, float]:
        """Per process, resident MB in the run's last quarter over its second quarter (after start-up): near 1
        when memory is bounded."""
        growth = {}
        for name, samples in self.rss_mb.items():
            quarter = len(samples) // 4
            if quarter and (second := max(samples[quarter:2 * quarter])):
                growth[name] = round(max(samples[3 * quarter:]) / second, 2)
        return growth

    def kill(self, name: str, at: float) -> None:
        self.sample()
        self.running[name].send_signal(signal.SIGKILL)
        self.running[name].wait(timeout=30)
        self.kills.append({"worker": name, "at_share": round(at, 2)})

    def stop_all(self, role: str = "") -> list[str]:
        """SIGTERM each (whose name starts with `role`), wait; the names of those that did not exit cleanly."""
        self.sample()
        unclean = []
        for name, process in self.running.items():
            if not name.startswith(role):
                continue
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if process.returncode != 0 and not any(kill["worker"] == name for kill in self.kills):
                unclean.append(name)
        return unclean


def _members(bootstrap: str, prefix: str, role: str) -> list[str]:
    return asyncio.run(group_members(bootstrap, consumer_group(prefix, role)))


def joined(bootstrap: str, prefix: str, processing: int) -> bool:
    """Whether the sink and every processing worker are members of their groups."""
    return (_members(bootstrap, prefix, "all").count(worker_client_id("process")) >= processing
            and bool(_members(bootstrap, prefix, "sink")))
