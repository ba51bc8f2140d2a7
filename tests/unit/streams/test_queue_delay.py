"""streams.queue_delay: a stage is behind while the oldest page it has not taken up has waited over the target —
also while it takes nothing up at all; a stage that has taken up every page published is not, however long ago.
A fetch held back waits until the stage has caught up, or at most as long as it was told."""

import asyncio

from streams.queue_delay import QueueDelay


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_behind_while_the_pages_taken_up_waited_over_the_target():
    clock = Clock()
    delay = QueueDelay(target_s=0.5, clock=clock)
    assert not delay.behind()  # nothing published
    for _ in range(3):
        delay.published()
        clock.now += 1.0
    delay.observe(1000.0)  # the first page, taken up 3 s after it was published; two more wait
    assert delay.behind() and delay.waited_s == 3.0
    delay.observe(1002.0)  # the last one: no page waits
    assert not delay.behind() and delay.waited_s == 0.0


def test_a_stage_that_takes_nothing_up_falls_further_behind():
    clock = Clock()
    delay = QueueDelay(target_s=0.5, clock=clock)
    delay.published()
    delay.observe(clock.now)
    clock.now += 60.0
    assert not delay.behind()  # idle for a minute, every page taken up
    delay.published()
    clock.now += 0.1
    assert not delay.behind() and round(delay.waited_s, 3) == 0.1
    for _ in range(10):  # the stage's delivery is held back: nothing is taken up
        clock.now += 1.0
        delay.published()
    assert delay.behind() and round(delay.waited_s, 3) == 10.1


def test_the_timestamp_in_whole_milliseconds_is_the_page_published_last():
    clock = Clock()
    clock.now = 1000.0004
    delay = QueueDelay(clock=clock)
    delay.published()
    delay.observe(1000.000)  # Kafka's timestamp, cut to the millisecond
    clock.now += 5.0
    assert not delay.behind()


async def test_a_held_fetch_waits_until_the_stage_catches_up_or_for_its_longest():
    clock = Clock()
    delay = QueueDelay(target_s=0.5, clock=clock)
    assert await delay.caught_up(longest_s=5.0) < 0.05  # not behind: no wait
    delay.published()
    clock.now += 1.0
    # Behind for good: the wait ends at its longest.
    assert 0.1 <= await delay.caught_up(longest_s=0.1, pause_s=0.01) < 1.0

    async def take_up_later():
        await asyncio.sleep(0.1)
        delay.observe(1000.0)

    taking_up = asyncio.create_task(take_up_later())
    # Caught up after 0.1 s: the wait ends then, well before its longest.
    assert 0.09 <= await delay.caught_up(longest_s=5.0, pause_s=0.01) < 1.0
    await taking_up
    assert not delay.behind()
