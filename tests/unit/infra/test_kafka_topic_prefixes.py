"""Telling sourcewatch's topic prefixes apart on a cluster (`sourcewatch kafka topics`)."""

from infra.kafka_topics import PrefixTopics, by_prefix, prefix_of
from schemas.registry import TOPICS


def test_a_topic_s_prefix_is_what_comes_before_the_registry_s_name_or_the_app_s_id():
    assert prefix_of("pages.fetched") == ""
    assert prefix_of("soak-20261207-005500.revisit.ticks") == "soak-20261207-005500."
    assert prefix_of("bench-1a2b3c4d.sourcewatch-frontier-seen-changelog") == "bench-1a2b3c4d."
    assert prefix_of("t0123456789.sourcewatch-sink-__assignor-__leader") == "t0123456789."
    assert prefix_of("orders") is None


def test_prefixes_are_grouped_with_their_partitions_and_other_topics_kept_apart():
    deployment = {name: 8 for name in TOPICS} | {"sourcewatch-revisit-sources-changelog": 8}
    run = {f"bench-1a2b3c4d.{name}": 4 for name in TOPICS}
    # A topic of someone else's whose name happens to end like one of ours: no prefix holds pages.fetched there.
    others = {"app-metrics": 3, "orders": 1, "__consumer_offsets": 50}
    groups, other = by_prefix(deployment | run | others)
    assert groups == [PrefixTopics("", len(TOPICS) + 1, 8 * (len(TOPICS) + 1)),
                      PrefixTopics("bench-1a2b3c4d.", len(TOPICS), 4 * len(TOPICS))]
    assert other == ["app-metrics", "orders"]
