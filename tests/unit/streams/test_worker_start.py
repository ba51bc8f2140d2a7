"""A starting worker waits for a broker that does not answer yet (streams.worker._with_broker)."""

from __future__ import annotations

import pytest
from aiokafka.errors import KafkaConnectionError

from streams.worker import _with_broker


def test_a_request_is_asked_again_until_the_broker_answers():
    calls = []

    async def request() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise KafkaConnectionError("Unable to bootstrap")
        return "topics"

    assert _with_broker("127.0.0.1:1", 30.0, request) == "topics"
    assert len(calls) == 3


def test_a_broker_that_never_answers_stops_the_worker_with_the_reason():
    async def request() -> None:
        raise KafkaConnectionError("Unable to bootstrap")

    with pytest.raises(SystemExit, match=r"Kafka at 127.0.0.1:1 did not answer for \d+ s .*sourcewatch kafka start"):
        _with_broker("127.0.0.1:1", 2.0, request)
