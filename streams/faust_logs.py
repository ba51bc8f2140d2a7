"""Faust's log lines that tell its normal working, not a fault, kept out of the worker's warnings.

Faust warns "producer buffer full size N" whenever an agent changes more than 100 table keys before their
changelog messages are sent — its flow control then waits for them, as it is built to. A list read whole (a
source page of hundreds of records) does that on every first read, so a user's console filled with the warning
while nothing was wrong. It stays visible at debug level.
"""

from __future__ import annotations

import logging

PRODUCER_LOGGER = "faust.transport.producer"


class ProducerBackPressure(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING and record.getMessage().startswith("producer buffer full"):
            return logging.getLogger(PRODUCER_LOGGER).isEnabledFor(logging.DEBUG)
        return True


def quiet_normal_working() -> None:
    logger = logging.getLogger(PRODUCER_LOGGER)
    if not any(isinstance(existing, ProducerBackPressure) for existing in logger.filters):
        logger.addFilter(ProducerBackPressure())
