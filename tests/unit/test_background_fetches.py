"""agents.fetching.background: requests no user waits on run only while the pipeline keeps up, up to a number at
once; a full lane turns requests away (the caller fetches them itself); a failed run goes back in the lane; a
closed lane hands back what it had not run; while behind, requests held past their longest wait go one at a
time."""

import asyncio

from agents.fetching.background import BackgroundLane
from schemas.crawl import ITEM_TIME_REASON, CrawlRequest


def _request(number: int) -> CrawlRequest:
    return CrawlRequest(site="example.org", url=f"https://example.org/item/{number}", crawl_id="watch",
                        reason=ITEM_TIME_REASON)


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_held_while_behind_then_run_once_caught_up():
    ran, behind = [], [True]

    async def run(request):
        ran.append(request.url)

    lane = BackgroundLane(run, lambda: behind[0], pause_s=0.01)
    lane.start()
    assert all(lane.offer(_request(n)) for n in range(3))
    await asyncio.sleep(0.05)
    assert ran == [] and len(lane) == 3
    behind[0] = False
    await asyncio.sleep(0.05)
    assert ran == [_request(n).url for n in range(3)] and len(lane) == 0
    assert await lane.close() == []


async def test_a_full_or_closed_lane_turns_requests_away():
    async def run(request):
        await asyncio.sleep(10)

    lane = BackgroundLane(run, lambda: True, capacity=2)
    assert not lane.offer(_request(0))  # not started
    lane.start()
    assert lane.offer(_request(0)) and lane.offer(_request(1))
    assert not lane.offer(_request(2))
    assert [request.url for request in await lane.close()] == [_request(0).url, _request(1).url]
    assert not lane.offer(_request(3))


async def test_runs_at_most_in_flight_at_once_and_hands_back_those_cut_off():
    started, release = [], asyncio.Event()

    async def run(request):
        started.append(request.url)
        await release.wait()

    lane = BackgroundLane(run, lambda: False, in_flight=2)
    lane.start()
    for n in range(5):
        lane.offer(_request(n))
    await _settle()
    assert started == [_request(0).url, _request(1).url]
    left = await lane.close()
    # The two under way were cut off (their pages never went out) and the three waiting never began.
    assert sorted(request.url for request in left) == sorted(_request(n).url for n in range(5))


async def test_a_failed_run_goes_back_in_the_lane():
    attempts = []

    async def run(request):
        attempts.append(request.url)
        if len(attempts) == 1:
            raise ConnectionError("broker away")

    lane = BackgroundLane(run, lambda: False, retry_s=0.01)
    lane.start()
    lane.offer(_request(0))
    await asyncio.sleep(0.1)
    assert attempts == [_request(0).url, _request(0).url] and len(lane) == 0
    assert await lane.close() == []


async def test_a_request_held_past_its_longest_wait_goes_regardless():
    ran = []

    async def run(request):
        ran.append(request.url)

    lane = BackgroundLane(run, lambda: True, pause_s=0.01, max_wait_s=0.05)
    lane.start()
    lane.offer(_request(0))
    await asyncio.sleep(0.02)
    assert ran == []
    await asyncio.sleep(0.1)
    assert ran == [_request(0).url]
    assert await lane.close() == []


async def test_while_behind_requests_past_their_longest_wait_go_one_at_a_time():
    ran, behind = [], [True]

    async def run(request):
        ran.append((request.url, asyncio.get_running_loop().time()))

    lane = BackgroundLane(run, lambda: behind[0], pause_s=0.01, max_wait_s=0.0, overdue_interval_s=0.3)
    lane.start()
    for n in range(4):
        lane.offer(_request(n))
    await asyncio.sleep(0.1)
    assert [url for url, _ in ran] == [_request(0).url]
    for _ in range(200):
        if len(ran) > 1:
            break
        await asyncio.sleep(0.01)
    assert [url for url, _ in ran] == [_request(0).url, _request(1).url]
    assert ran[1][1] - ran[0][1] >= 0.25  # let go 0.3 s apart; each run starts a moment after
    # Caught up: what is left goes at once.
    behind[0] = False
    await asyncio.sleep(0.05)
    assert [url for url, _ in ran] == [_request(n).url for n in range(4)]
    assert await lane.close() == []
