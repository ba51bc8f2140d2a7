"""The discovery agent scores a batch of pages in one call (the discovery stage's batches) as it scores each
page alone: the same logits, pages of no anchors included."""

import numpy as np

from models.discovery.agent import DEFAULT_AGENT, RLCrawler
from models.discovery.policies import Candidate


def _page(site: int, size: int) -> list[Candidate]:
    paths = ["html/body/nav/ul/li/a", "html/body/main/div/a", "html/body/footer/a"]
    words = ["Events", "News", "About us", "Contact", "Calendar", "Shop", "Meetings", "Archive"]
    return [Candidate(f"http://site{site}.org/{words[(site + n) % len(words)].lower()}/{n}",
                      f"{words[(site * 3 + n) % len(words)]} {n % 4}", paths[(site + n) % 3], 1, n)
            for n in range(size)]


def test_a_batch_of_pages_scores_as_each_page_alone():
    agent = RLCrawler.load(DEFAULT_AGENT)
    pages = [_page(0, 9), [], _page(1, 1), _page(2, 23), _page(3, 4)]
    batched = agent.logits_of_pages(pages)
    assert len(batched) == len(pages)
    for anchors, (way, hit) in zip(pages, batched, strict=True):
        alone_way, alone_hit = agent.logits(anchors)
        assert way.shape == hit.shape == (len(anchors),)
        np.testing.assert_allclose(way, alone_way, atol=1e-5)
        np.testing.assert_allclose(hit, alone_hit, atol=1e-5)
    assert [len(way) for way, _ in agent.logits_of_pages([[], []])] == [0, 0]
