from datetime import UTC, datetime

import pytest

from infra.simweb.generator import NAV_STYLES, PAGINATION_STYLES, TEMPLATES, generate_web
from infra.simweb.publication import load_real_series

START = datetime(2026, 1, 5, 8, tzinfo=UTC)


def test_same_seed_same_sites_and_another_seed_differs():
    assert generate_web(30, 7, None, START) == generate_web(30, 7, None, START)
    assert generate_web(30, 7, None, START) != generate_web(30, 8, None, START)


def test_the_web_has_the_variety_it_promises():
    web = generate_web(60, 3, None, START)
    assert {site.template for site in web} == set(TEMPLATES)
    assert {site.nav_style for site in web} == set(NAV_STYLES)
    assert {source.pagination for site in web for source in site.sources} == set(PAGINATION_STYLES)
    assert {source.clicks for site in web for source in site.sources} >= {1, 2, 3}
    assert {site.lang for site in web} == {"en", "zh-TW", "zh-CN", "ja", "de", "es"}
    without = sum(1 for site in web if not site.sources)
    assert 0 < without < 20  # about 15 % have no source page
    assert all(10 <= site.page_count <= 210 for site in web)


def test_poisson_items_are_ordered_and_span_history_and_future():
    web = generate_web(20, 5, None, START)
    for source in (s for site in web for s in site.sources):
        hours = [item.hours for item in source.items]
        assert hours == sorted(hours)
        assert source.series.origin.startswith("poisson")
    assert any(item.hours > 0 for site in web for s in site.sources for item in s.items)
    assert any(item.hours < 0 for site in web for s in site.sources for item in s.items)


@pytest.mark.data
def test_with_real_series_each_source_replays_a_real_source(data_dir):
    revisit = data_dir / "revisit"
    real = dict(load_real_series(revisit))
    web = generate_web(10, 2, revisit, START)
    sources = [s for site in web for s in site.sources]
    assert sources
    for source in sources:
        assert source.series.origin.split(":")[0] in ("epa", "endoflife")
        real_hours = {round(h, 6) for h in real[source.series.origin]}
        offsets = [item.hours for item in source.items]
        # The items are the real posting times shifted by one constant: the clock's start inside the series.
        shifts = [h - offsets[0] for h in real[source.series.origin]]
        assert any(all(round(x + shift, 6) in real_hours for x in offsets) for shift in shifts)
        assert min(abs(x) for x in offsets) < 1e-9  # the clock starts on a real posting
        assert offsets[0] <= 0 <= offsets[-1]
