"""Kafka cluster ids: the storage tool's format, never mistaken for an option."""

import base64

from infra.kafka_broker import new_cluster_id


def test_cluster_ids_are_16_bytes_base64url_and_never_start_with_a_dash():
    ids = [new_cluster_id() for _ in range(2000)]  # a leading '-' has odds of 1 in 64 per id
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
    assert all(len(base64.urlsafe_b64decode(i + "==")) == 16 for i in ids)
    assert len(set(ids)) == len(ids)
