"""A table written from a batched agent: each key's changelog on the partition of its own event."""

from types import SimpleNamespace

import pytest

from agents.frontier import BfsFrontier
from schemas.links import Anchor, LinksScored
from streams.tables import OnEventPartition, delete


class _Table:
    """What a Faust table offers these writes: its data and its changelog (the sends kept)."""

    def __init__(self) -> None:
        self.data: dict = {}
        self.changelog: list[tuple] = []

    def send_changelog(self, partition, key, value, value_serializer=None):
        self.changelog.append((partition, key, value))


def _event(partition: int):
    return SimpleNamespace(message=SimpleNamespace(partition=partition))


def test_each_write_goes_to_the_changelog_partition_of_the_event_it_came_with():
    table = _Table()
    OnEventPartition(table, _event(3))["a"] = 1
    on_five = OnEventPartition(table, _event(5))
    on_five.setdefault("b", 2)
    on_five.setdefault("a", 9)  # there already: no write
    assert table.data == {"a": 1, "b": 2} and "a" in on_five and on_five["b"] == 2 and len(on_five) == 2
    del on_five["a"]
    assert table.changelog == [(3, "a", 1), (5, "b", 2), (5, "a", None)] and table.data == {"b": 2}
    with pytest.raises(KeyError):
        del on_five["a"]
    delete(table, 7, "b")
    assert table.changelog[-1] == (7, "b", None) and table.data == {}


def test_the_frontier_planned_from_a_batch_writes_each_sites_state_on_its_pages_partition():
    seen, planned = _Table(), _Table()
    for partition, site in ((1, "a.org"), (2, "b.org")):
        links = LinksScored(site=site, page_url=f"http://{site}/", final_url=f"http://{site}/", crawl_id="c",
                            max_depth=2, max_pages=10,
                            anchors=[Anchor(url=f"http://{site}/{n}", text=str(n)) for n in range(2)])
        event = _event(partition)
        requests = BfsFrontier(OnEventPartition(seen, event), OnEventPartition(planned, event)).next_requests(links)
        assert [r.url for r in requests] == [f"http://{site}/0", f"http://{site}/1"]
    assert {(p, k.split("\x00")[1].split("/")[2]) for p, k, _ in seen.changelog} == {(1, "a.org"), (2, "b.org")}
    assert [(p, v) for p, _, v in planned.changelog] == [(1, 3), (2, 3)]
