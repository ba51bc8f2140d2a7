"""Politeness measured where it counts: the simulated sites' server counts how crawlers treat each site
(infra.simweb Visits), and the soak judges those counts against the settings (jobs.soak_truth.politeness)."""

import time

from infra.simweb.server import IN_FLIGHT_GRACE_SECONDS, Visits
from jobs.soak_truth import politeness


def test_the_server_counts_requests_in_flight_gaps_and_impatience():
    visits = Visits()
    visits.arrive()
    visits.arrive()
    assert visits.in_flight == 2 and visits.max_in_flight == 2
    visits.in_flight -= 2
    time.sleep(0.05)
    visits.arrive()
    assert visits.min_gap_s < 0.05 and visits.max_in_flight == 2
    visits.in_flight -= 1
    visits.told_to_retry_after(5)
    visits.arrive()  # under way when the answer went out: not impatient
    visits.in_flight -= 1
    assert visits.before_retry_after == 0
    time.sleep(IN_FLIGHT_GRACE_SECONDS + 0.02)
    visits.arrive()
    assert visits.before_retry_after == 1
    assert visits.figures()["requests"] == 5


def _site(requests: int, in_flight: int, gap: float | None, early: int = 0) -> dict:
    return {"requests": requests, "max_in_flight": in_flight, "min_gap_s": gap, "before_retry_after": early}


def test_the_soak_names_the_sites_whose_politeness_was_exceeded():
    polite = {"site-0": _site(10, 2, 0.5), "site-1": _site(1, 1, None)}
    judged = politeness(polite, concurrency=2, delay_s=0.4)
    assert judged["exceeded"] == [] and judged["requests"] == 11 and judged["max_in_flight"] == 2
    assert judged["min_gap_s"] == 0.5 and judged["delay_s"] == 0.4
    rude = polite | {"site-2": _site(5, 3, 0.6), "site-3": _site(5, 1, 0.6, early=2)}
    judged = politeness(rude, concurrency=2, delay_s=0.4)
    assert judged["exceeded"] == ["site-2", "site-3"] and judged["before_retry_after"] == 2


def test_requests_the_crawler_had_under_way_when_it_read_a_retry_after_are_crossings_not_impatience():
    visits = {"site-0": _site(10, 2, 0.5, early=1), "site-1": _site(10, 2, 0.5, early=2)}
    # The crawler had one request under way at each site when it read their Retry-Afters.
    judged = politeness(visits, concurrency=2, delay_s=0.4, under_way={"site-0": 1, "site-1": 1})
    assert judged["before_retry_after"] == 3 and judged["before_retry_after_under_way"] == 2
    assert judged["under_way_at_retry_after"] == 2 and judged["exceeded"] == ["site-1"]
