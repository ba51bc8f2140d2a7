"""streams.queue_delay: a stage is behind while the page it last took up waited over the target, and only while
that sighting is fresh (a stage that has taken nothing up for a while has no queue)."""

from streams.queue_delay import QueueDelay


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_behind_while_the_latest_page_waited_over_the_target():
    clock = Clock()
    delay = QueueDelay(target_s=0.5, fresh_s=2.0, clock=clock)
    assert not delay.behind()  # nothing seen yet
    delay.observe(clock.now - 3.0)
    assert delay.behind() and delay.waited_s == 3.0
    delay.observe(clock.now - 0.2)  # the queue ran short
    assert not delay.behind()


def test_a_stale_sighting_says_nothing_of_now():
    clock = Clock()
    delay = QueueDelay(target_s=0.5, fresh_s=2.0, clock=clock)
    delay.observe(clock.now - 30.0)
    clock.now += 1.5
    assert delay.behind()
    clock.now += 1.0  # no page taken up for 2.5 s: the queue is empty
    assert not delay.behind() and delay.waited_s == 0.0


def test_a_producer_clock_ahead_of_ours_is_no_wait():
    clock = Clock()
    delay = QueueDelay(clock=clock)
    delay.observe(clock.now + 5.0)
    assert delay.waited_s == 0.0 and not delay.behind()
