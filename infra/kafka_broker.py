"""The local Apache Kafka broker: single-node KRaft on 127.0.0.1, from Maven Central jars.

`make setup` copies the broker and its runtime dependencies into
`settings.kafka_libs` (see infra/kafka/pom.xml). `LocalKafka.start()` formats
the storage on first start, launches `kafka.Kafka` on the machine's Java, waits
until the broker answers a metadata request, and records pid and port in
`<kafka_dir>/broker.json`. Everything else finds the broker through
`bootstrap_address(settings)`, which prefers `SOURCEWATCH_KAFKA_BOOTSTRAP`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from infra.processes import pid_alive
from infra.settings import Settings

STATE_FILE = "broker.json"


class KafkaSetupError(RuntimeError):
    """The local broker cannot start; the message says what to do."""


@dataclass(frozen=True)
class BrokerState:
    pid: int
    port: int
    controller_port: int
    started_in_seconds: float

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def first_free_port(start: int, exclude: frozenset[int] = frozenset()) -> int:
    for port in range(start, start + 200):
        if port not in exclude and _port_is_free(port):
            return port
    raise KafkaSetupError(f"no free port on 127.0.0.1 in {start}..{start + 199}")



async def broker_answers(bootstrap: str, timeout: float = 5.0) -> bool:
    """True when a Kafka broker at bootstrap answers a metadata request."""
    from aiokafka.admin import AIOKafkaAdminClient

    # While the broker boots every probe fails; aiokafka would log each failure as an error.
    aiokafka_log = logging.getLogger("aiokafka")
    level = aiokafka_log.level
    aiokafka_log.setLevel(logging.CRITICAL)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=int(timeout * 1000))
    try:
        await asyncio.wait_for(admin.start(), timeout)
        await asyncio.wait_for(admin.list_topics(), timeout)
        return True
    except Exception:  # any failure to talk means "not answering yet"
        return False
    finally:
        await admin.close()
        aiokafka_log.setLevel(level)


class LocalKafka:
    def __init__(
        self,
        libs_dir: Path,
        data_dir: Path,
        port: int = 9092,
        heap_mb: int = 768,
        max_message_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        self.libs_dir = libs_dir.absolute()
        self.data_dir = data_dir.absolute()
        self.port = port
        self.heap_mb = heap_mb
        self.max_message_bytes = max_message_bytes

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalKafka:
        return cls(
            settings.kafka_libs,
            settings.kafka_dir,
            settings.kafka_port,
            settings.kafka_heap_mb,
            settings.kafka_max_message_bytes,
        )

    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    @property
    def log_path(self) -> Path:
        return self.data_dir / "broker.log"

    def state(self) -> BrokerState | None:
        """The running broker's state, or None (a stale state file is removed)."""
        try:
            state = BrokerState(**json.loads(self.state_path.read_text()))
        except (FileNotFoundError, ValueError, TypeError):
            return None
        if not pid_alive(state.pid):
            self.state_path.unlink(missing_ok=True)
            return None
        return state

    def _check_installed(self) -> None:
        if shutil.which("java") is None:
            raise KafkaSetupError("java is not on PATH: install Java 17+ (Kafka 4 needs it)")
        if not any(self.libs_dir.glob("kafka_2.13-*.jar")):
            raise KafkaSetupError(f"no Kafka jars in {self.libs_dir}: run `make setup` first")

    def _java(self, main: str, *args: str) -> list[str]:
        log_config = resources.files("infra") / "kafka" / "log4j2.properties"
        return [
            "java",
            f"-Xmx{self.heap_mb}m",
            f"-Xms{min(self.heap_mb, 256)}m",
            f"-Dlog4j2.configurationFile={log_config}",
            "-cp",
            f"{self.libs_dir}/*",
            main,
            *args,
        ]

    def _write_config(self, port: int, controller_port: int) -> Path:
        logs = self.data_dir / "logs"
        config = self.data_dir / "server.properties"
        config.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    "node.id=1",
                    f"controller.quorum.voters=1@127.0.0.1:{controller_port}",
                    f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
                    "controller.listener.names=CONTROLLER",
                    "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                    "inter.broker.listener.name=PLAINTEXT",
                    f"log.dirs={logs}",
                    "num.partitions=8",
                    "offsets.topic.replication.factor=1",
                    "offsets.topic.num.partitions=8",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "share.coordinator.state.topic.replication.factor=1",
                    "share.coordinator.state.topic.min.isr=1",
                    "group.initial.rebalance.delay.ms=0",
                    "auto.create.topics.enable=true",
                    f"message.max.bytes={self.max_message_bytes}",
                    f"replica.fetch.max.bytes={self.max_message_bytes}",
                    # A local broker: keep a week of data, not forever.
                    "log.retention.hours=168",
                ]
            )
            + "\n"
        )
        return config

    def _format_storage(self, config: Path) -> None:
        if (self.data_dir / "logs" / "meta.properties").exists():
            return
        cluster_id = (self.data_dir / "cluster.id")
        if not cluster_id.exists():
            cluster_id.write_text(new_cluster_id())
        result = subprocess.run(
            self._java("kafka.tools.StorageTool", "format", "-t", cluster_id.read_text().strip(), "-c", str(config)),
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise KafkaSetupError(f"formatting Kafka storage failed: {result.stdout}{result.stderr}".strip())

    def start(self, timeout: float = 90.0) -> BrokerState:
        """Start the broker (or return the running one) and wait until it answers."""
        running = self.state()
        if running is not None:
            return running
        self._check_installed()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        port = first_free_port(self.port)
        controller_port = first_free_port(port + 1, exclude=frozenset({port}))
        config = self._write_config(port, controller_port)
        self._format_storage(config)
        with open(self.log_path, "ab") as log:
            process = subprocess.Popen(
                self._java("kafka.Kafka", str(config)),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # survives the CLI that started it
            )
        bootstrap = f"127.0.0.1:{port}"
        while not asyncio.run(broker_answers(bootstrap, timeout=3.0)):
            if process.poll() is not None:
                raise KafkaSetupError(f"the Kafka broker exited with {process.returncode}; see {self.log_path}")
            if time.monotonic() - began > timeout:
                process.terminate()
                raise KafkaSetupError(f"the Kafka broker did not answer within {timeout:.0f}s; see {self.log_path}")
            time.sleep(0.5)
        state = BrokerState(process.pid, port, controller_port, round(time.monotonic() - began, 2))
        self.state_path.write_text(json.dumps(state.__dict__))
        return state

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the broker this project started; False when none was running."""
        state = self.state()
        if state is None:
            return False
        os.killpg(state.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(state.pid) and time.monotonic() < deadline:
            _reap(state.pid)
            time.sleep(0.2)
        if pid_alive(state.pid):
            os.killpg(state.pid, signal.SIGKILL)
            _reap(state.pid)
        self.state_path.unlink(missing_ok=True)
        return True


def _reap(pid: int) -> None:
    """Collect the exit status when the broker is our own child (else it lingers as a zombie)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def new_cluster_id() -> str:
    """16 random bytes, base64url without padding (22 chars), as Kafka's own tool makes them — but never
    starting with '-', which the storage tool's argument parser would read as an option (1 id in 64)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def bootstrap_address(settings: Settings) -> str:
    """The Kafka every component talks to: the configured cluster, else the local broker."""
    if settings.kafka_bootstrap:
        return settings.kafka_bootstrap
    state = LocalKafka.from_settings(settings).state()
    return state.bootstrap if state else f"127.0.0.1:{settings.kafka_port}"


def ensure_local_broker(settings: Settings) -> None:
    """Start the local broker when no other Kafka is configured (a no-op when it runs)."""
    if not settings.kafka_bootstrap:
        LocalKafka.from_settings(settings).start()
