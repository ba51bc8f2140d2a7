"""When `sourcewatch discover` beside running workers stops waiting for its episodes (jobs.crawl.DiscoveryStall)."""

import asyncio
import logging
import socket

from jobs.crawl import DiscoveryStall, _crawl_positions

GROUP = "sourcewatch"


def positions(committed: int, end: int) -> dict:
    return {GROUP: {("crawl.requests", 0): (committed, end)}}


def test_a_busy_watch_holding_the_next_click_is_no_stall():
    """The watch's first reads queue 5,000 requests ahead of an episode's next click: the workers work through
    them for minutes while the crawl fetches nothing; only once they are past what was queued does the clock
    start."""
    stall = DiscoveryStall(seconds=60)
    assert not stall.stalled(0, True, positions(0, 5_000))
    # The fetches stop growing at the next look, with 5,001 messages queued; 10 handled a second, more arriving.
    for second in range(1, 300):
        assert not stall.stalled(second, False, positions(10 * second, 5_000 + second)), second
    assert not stall.stalled(500, False, positions(5_000, 5_500))
    assert not stall.stalled(501, False, positions(5_001, 5_500))
    assert not stall.stalled(560, False, positions(5_100, 5_600))
    assert stall.stalled(561, False, positions(5_200, 5_700))


def test_a_new_fetch_starts_the_wait_again():
    stall = DiscoveryStall(seconds=60)
    stall.stalled(0, False, positions(100, 100))
    assert not stall.stalled(59, False, positions(110, 120))
    assert not stall.stalled(60, True, positions(120, 130))
    # The next wait begins at what is queued at the next look (140), the clock once the workers are past it.
    assert not stall.stalled(61, False, positions(125, 140))
    assert not stall.stalled(125, False, positions(139, 150))
    assert not stall.stalled(126, False, positions(140, 150))
    assert not stall.stalled(185, False, positions(145, 150))
    assert stall.stalled(186, False, positions(150, 150))


def test_workers_that_handle_nothing_stall_it():
    """A worker gone: the queue never moves, so the crawl is not waited on for ever."""
    stall = DiscoveryStall(seconds=60)
    assert not stall.stalled(0, True, positions(10, 500))
    assert not stall.stalled(59, False, positions(10, 520))
    assert stall.stalled(60, False, positions(10, 540))


def test_every_group_must_be_past_the_queue():
    """The sink workers' group writes the fetch rows: the processing group caught up is not enough."""
    stall = DiscoveryStall(seconds=60)
    both = {GROUP: {("crawl.requests", 0): (50, 50)}, "sourcewatch-sink": {("pages.fetched", 0): (0, 80)}}
    stall.stalled(0, False, both)
    for second in range(1, 200):
        behind = {GROUP: {("crawl.requests", 0): (50, 50)},
                  "sourcewatch-sink": {("pages.fetched", 0): (second // 4, 80)}}
        assert not stall.stalled(second, False, behind), second
    caught_up = {GROUP: {("crawl.requests", 0): (50, 50)}, "sourcewatch-sink": {("pages.fetched", 0): (80, 80)}}
    assert not stall.stalled(320, False, caught_up)
    assert stall.stalled(380, False, caught_up)


def test_a_broker_that_does_not_answer_leaves_the_positions_unknown_not_the_command_failed(caplog):
    # The soak stops its broker for 30 s while discovery's command may still follow its episodes: asked then,
    # aiokafka raises (a timeout, a refused connection), and the command asked again instead of ending there.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with caplog.at_level(logging.WARNING, logger="jobs.crawl"):
        assert asyncio.run(_crawl_positions(f"127.0.0.1:{port}", "sw.", {"sw.crawl.requests"})) is None
    assert "the broker gave no queue positions" in caplog.text
