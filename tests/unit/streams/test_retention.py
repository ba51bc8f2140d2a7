"""What the tables let go of: which keys go, how long a crawl counts as idle, when a time is too old."""

import time

from streams import progress
from streams.retention import crawl_of, keys_to_drop, named_in, older_than


def test_a_key_names_its_crawl_and_what_it_is_about():
    assert crawl_of("c1\x00e.org") == "c1" and named_in("c1\x00e.org") == "e.org"
    assert named_in("c1\x00http://e.org/events/\x00http://e.org/events/?page=2") == "http://e.org/events/"
    assert named_in("c1\x00http://e.org/events/\x00") == "http://e.org/events/"
    assert crawl_of("plain") == "plain" and named_in("plain") == ""


def test_only_keys_of_idle_crawls_in_this_workers_partitions_are_dropped():
    keys = ["old\x00a.org", "old\x00b.org", "busy\x00a.org", "old\x00unknown.org"]
    # a.org's partition is this worker's; b.org's another worker's (a standby copy here); unknown.org's not yet
    # known to the consumer.
    owned = {"a.org": 0, "b.org": None, "unknown.org": None}
    dropped = keys_to_drop([(key, 1) for key in keys], lambda key, _: crawl_of(key) == "old",
                           lambda key: owned[named_in(key)])
    assert dropped == [("old\x00a.org", 0)]


def test_a_time_is_too_old_past_the_keep():
    expired = older_than(3600, now_ms=10_000_000)
    assert expired("k", 10_000_000 - 3_600_001) and not expired("k", 10_000_000 - 3_600_000)
    assert not expired("k", 10_000_000) and not expired("k", "not a time")


def test_a_crawl_is_idle_from_its_last_message_and_a_crawl_never_seen_from_its_first_look(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    progress.of("worked")
    now[0] += 30
    assert progress.idle_seconds("worked") == 30
    # Recovered from a changelog, never worked on in this process: idle from now on, not since the epoch.
    assert progress.idle_seconds("recovered") == 0
    now[0] += 60
    assert progress.idle_seconds("recovered") == 60 and set(progress.idle_for(90)) >= {"worked"}
    assert "recovered" not in progress.idle_for(90)
    progress.of("worked").pages_fetched += 1
    assert "worked" not in progress.idle_for(1)
    progress.forget("worked")
    progress.forget("recovered")
    assert progress.idle_seconds("worked") == 0 and progress.of("worked").pages_fetched == 0
    progress.forget("worked")
