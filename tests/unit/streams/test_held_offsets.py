"""A held partition is never committed past its first held offset; other partitions commit as Faust says."""

import asyncio

from faust.types import TP

from streams.held_offsets import HeldOffsets, committing_no_further


def test_a_held_partition_is_committed_no_further_than_its_first_held_offset():
    held = HeldOffsets()
    pages, links = TP("pages.fetched", 1), TP("links.found", 0)
    held.hold(pages, 7)
    held.hold(pages, 5)
    held.hold(pages, 9)
    assert held.clamp({pages: 12, links: 40}) == {pages: 5, links: 40}
    assert held.clamp({pages: 3}) == {pages: 3}


def test_the_consumer_commit_receives_the_clamped_offsets():
    committed: list[dict] = []

    async def commit(offsets):
        committed.append(dict(offsets))
        return True

    held = HeldOffsets()
    held.hold(TP("pages.fetched", 0), 0)
    commit_held = committing_no_further(commit, held)
    assert asyncio.run(commit_held({TP("pages.fetched", 0): 5, TP("pages.fetched", 1): 2})) is True
    assert committed == [{TP("pages.fetched", 0): 0, TP("pages.fetched", 1): 2}]
