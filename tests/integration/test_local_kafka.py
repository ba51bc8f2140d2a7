import pytest

from infra.kafka_broker import LocalKafka, broker_answers
from infra.settings import Settings
from tests.conftest import free_port

pytestmark = pytest.mark.kafka


def test_start_is_idempotent_and_stop_is_clean(tmp_path):
    settings = Settings()
    broker = LocalKafka(settings.kafka_libs, tmp_path / "kafka", port=free_port(29092), heap_mb=384)
    state = broker.start()
    try:
        assert broker.start() == state  # a second start finds the running broker
        assert broker.state() == state
        assert (tmp_path / "kafka" / "logs" / "meta.properties").is_file()  # storage formatted on first start
        import asyncio

        assert asyncio.run(broker_answers(state.bootstrap))
    finally:
        assert broker.stop()
    assert broker.state() is None
    assert not broker.stop()
