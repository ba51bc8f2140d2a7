"""One log line when the Kafka broker becomes unreachable and one when it is back, instead of thousands.

While the broker is down, aiokafka logs every failed connect, metadata refresh,
fetch and coordinator lookup as an error: about 2,000 lines in 30 s on one
worker. A filter on aiokafka's loggers lets the first through as the outage's
start, counts the rest without logging them, and a timer that asks the broker
for metadata every few seconds during an outage logs its end and length.
"""

from __future__ import annotations

import logging
import re
import time

from infra.kafka_broker import broker_answers

log = logging.getLogger(__name__)

# What starts an outage: the broker cannot be reached at all.
UNREACHABLE = re.compile(
    r"Unable connect|Unable to (update|request) metadata|NodeNotReady|KafkaConnectionError|Connect call failed"
)
# What an outage brings besides (also seen briefly while a broker starts, which is no outage): counted during
# one, logged otherwise.
DURING_OUTAGE = re.compile(
    r"CoordinatorNotAvailable|Coordinator Request failed|Heartbeat|coordinator dead|RequestTimedOut|"
    r"Failed fetch messages"
)
PROBE_SECONDS = 2.0


class BrokerOutage(logging.Filter):
    """Collapses the connection errors of one broker outage into a line at its start and one at its end."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__()
        self.bootstrap = bootstrap
        self.since: float | None = None
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        message = record.getMessage()
        if self.since is not None and (UNREACHABLE.search(message) or DURING_OUTAGE.search(message)):
            self.suppressed += 1
            return False
        if not UNREACHABLE.search(message):
            return True
        self.since, self.suppressed = time.monotonic(), 0
        record.msg = ("Kafka at %s unreachable (%s); its connection errors are counted, not logged, until it "
                      "answers again")
        record.args = (self.bootstrap, message.strip())
        return True

    def install(self) -> None:
        """Filter every aiokafka logger (a filter on a logger sees only what that logger itself logs)."""
        import aiokafka  # noqa: F401 — its modules create their loggers on import

        for name in list(logging.root.manager.loggerDict):
            if name == "aiokafka" or name.startswith("aiokafka."):
                logging.getLogger(name).addFilter(self)

    async def probe(self) -> None:
        """During an outage, ask the broker; once it answers, log the outage's end and length."""
        if self.since is None or not await broker_answers(self.bootstrap, timeout=PROBE_SECONDS):
            return
        log.warning("Kafka at %s answers again after an outage of %.0f s (%d connection errors not logged)",
                    self.bootstrap, time.monotonic() - self.since, self.suppressed)
        self.since = None
