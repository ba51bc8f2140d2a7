"""Faust's back-pressure warning stays out of a worker's console; its other warnings do not."""

import logging

from streams.faust_logs import PRODUCER_LOGGER, quiet_normal_working


def test_the_producer_buffers_back_pressure_is_kept_at_debug_and_other_warnings_pass(caplog):
    quiet_normal_working()
    quiet_normal_working()  # a second worker start in one process adds no second filter
    logger = logging.getLogger(PRODUCER_LOGGER)
    assert len(logger.filters) == 1
    logger.setLevel(logging.WARNING)
    with caplog.at_level(logging.WARNING, logger=PRODUCER_LOGGER):
        logger.warning("producer buffer full size 457")
        logger.warning("producer failed to send")
    assert [record.getMessage() for record in caplog.records] == ["producer failed to send"]
    logger.setLevel(logging.DEBUG)
    with caplog.at_level(logging.DEBUG, logger=PRODUCER_LOGGER):
        logger.warning("producer buffer full size 457")
    assert caplog.records[-1].getMessage() == "producer buffer full size 457"
    logger.setLevel(logging.NOTSET)
