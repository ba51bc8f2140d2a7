"""`sourcewatch kafka topics` and `delete-topics` on a real broker: a run's topics listed by prefix and deleted,
this deployment's own refused."""

import asyncio

import pytest

from infra.kafka_topics import ensure_topics
from schemas.registry import TOPICS
from tests.conftest import broker_topics, cli_json, run_cli

pytestmark = pytest.mark.kafka


def test_a_left_behind_run_is_listed_by_prefix_and_deleted_and_the_deployment_s_own_topics_are_not(pipeline_env):
    bootstrap, own = pipeline_env["SOURCEWATCH_KAFKA_BOOTSTRAP"], pipeline_env["SOURCEWATCH_TOPIC_PREFIX"]
    run = f"left-{own}"
    for prefix in (own, run):
        asyncio.run(ensure_topics(bootstrap, prefix, 2))

    listed = {group["prefix"]: group for group in cli_json(["kafka", "topics"], pipeline_env)["prefixes"]}
    # Two partitions a topic, but where the registry fixes a topic's own count.
    partitions = sum(spec.partitions or 2 for spec in TOPICS.values())
    assert listed[run] == {"prefix": run, "topics": len(TOPICS), "partitions": partitions}
    assert own in listed

    # A prefix that would reach this deployment's own topics is refused, whatever else it names.
    refused = run_cli(["kafka", "delete-topics", "--prefix", own[:3]], pipeline_env)
    assert refused.returncode == 2 and "this deployment's own" in refused.stderr
    assert run_cli(["kafka", "delete-topics"], pipeline_env).returncode == 2

    deleted = cli_json(["kafka", "delete-topics", "--prefix", run], pipeline_env)
    assert sorted(deleted["deleted"]) == sorted(f"{run}{name}" for name in TOPICS)
    left = broker_topics(bootstrap)
    assert not [name for name in left if name.startswith(run)]
    assert all(f"{own}{name}" in left for name in TOPICS)
