"""The list ranker's candidates (MDR regions and sibling groups), their features, its training, its file."""

import numpy as np
import pytest
import torch

from models.model_files import ModelVersionError
from models.records.candidates import FEATURES, MAX_DESCRIBED, candidate_features, page_candidates, shortlist
from models.records.extraction import in_navigation, sibling_groups
from models.records.ranker import TRAINING, LargestRegion, ListRanker, train_ranker
from models.web.dom import parse_html

BASE = "https://club.example.org/events/"


def _page() -> str:
    rows = "".join(f'<tr><td><a href="/t/{n}">Session {n} title</a></td></tr><tr><td>Room {n}, 2024-05-{n:02d} 10:00'
                   f" with <b>speaker {n}</b> and panel</td></tr>" for n in range(1, 7))
    tags = "".join(f'<span class="tag">topic {n}</span>' for n in range(5))
    return f"<html><body><nav><ul><li><a href='/'>Home</a></li><li><a href='/a'>About</a></li></ul></nav>" \
           f"<main><table>{rows}</table><div class='tags'>{tags}</div></main></body></html>"


def test_candidates_come_from_mdr_and_sibling_groups_each_element_set_once():
    root = parse_html(_page())
    candidates = page_candidates(root, BASE)
    generators = {c.generator for c in candidates}
    assert generators == {"mdr", "siblings"}
    # MDR reads the table as six records of two rows (a title row, a details row); the twelve rows as a sibling
    # group would be the same elements less that grouping, so they are not a candidate of their own.
    assert any(c.generator == "mdr" and len(c.records) == 6 and len(c.records[0]) == 2 for c in candidates)
    assert not any(c.generator == "siblings" and c.records[0][0].tag == "tr" for c in candidates)
    assert any(c.records[0][0].get("class") == "tag" and len(c.records) == 5 for c in candidates)
    # MDR leaves navigation out; as a sibling group the menu is a candidate, for the ranker to weigh.
    assert any(c.generator == "siblings" and c.records[0][0].tag == "li" for c in candidates)
    features = candidate_features(candidates, root, BASE)
    assert features.shape == (len(candidates), len(FEATURES)) and np.isfinite(features).all()
    # The largest MDR region is what the extractor chose before the ranker.
    chosen = candidates[LargestRegion().choose(features)]
    assert chosen.generator == "mdr" and len(chosen.records) == 6


def test_a_pages_frame_built_twice_is_no_candidate_outside_navigation():
    # A desktop and a mobile header, each with the same menu: neither the two headers as records nor the two
    # menus as one list split in parts may pass for content (their common ancestor lies outside navigation).
    menu = "<nav><ul class='menu'>" + "".join(f"<li class='menu-item'><a href='/{p}/'>{p.title()} section</a></li>"
                                             for p in ("posts", "projects", "workshops", "team", "partners")) + \
        "</ul></nav>"
    header = "<header class='{0}'><div class='title'><a href='/'>The club's own site</a></div>" + menu + "</header>"
    html = (f"<html><body><div class='wrapper'>{header.format('desktop')}{header.format('mobile')}<main>"
            "<h1>Posts</h1><p><a href='/posts/1/'>Welcome to the club</a> March 8, 2026</p></main></div></body></html>")
    root = parse_html(html)
    outside = [c for c in page_candidates(root, BASE) if not in_navigation(c.region.parent)]
    assert not any(c.records[0][0].tag == "header" or "section" in c.texts[0] for c in outside)


def test_alike_items_mdr_paired_up_are_also_read_one_by_one():
    # Every other result shows a snippet and details: one by one too unlike for MDR, alike two by two. Each
    # links a result of its own, so the twelve are also a candidate one each, both readings marked for the ranker.
    def result(n: int) -> str:
        details = (f"<p>About result {n}, a long snippet of text</p><div><span>2024-05-{n:02d}</span><span>5 KB"
                   "</span><img src='x.png'><em>pdf</em></div>") if n % 2 else ""
        return f'<li><a href="/r/{n}">Result {n} title</a>{details}</li>'

    root = parse_html("<html><body><main><ul>" + "".join(result(n) for n in range(1, 13)) + "</ul></main></body></html>")
    candidates = page_candidates(root, BASE)
    paired = [c for c in candidates if c.generator == "mdr" and len(c.records) == 6]
    one_by_one = [c for c in candidates if c.generator == "siblings" and len(c.records) == 12]
    assert len(paired) == len(one_by_one) == 1
    assert paired[0].regrouped and one_by_one[0].regrouped
    assert one_by_one[0].texts[1].startswith("Result 2 title")
    column = FEATURES.index("regrouped")
    assert candidate_features(candidates, root, BASE)[:, column].sum() == 2


def test_of_a_page_of_meetings_by_year_the_current_years_list_holds_the_newest_date():
    def year(number: int) -> str:
        rows = "".join(f'<li><a href="/m/{number}-{month}">Board meeting, {month}/12/{number} 6 pm</a></li>'
                       for month in range(1, 7))
        return f"<h2>Meetings {number}</h2><ul class='meetings'>{rows}</ul>"

    root = parse_html("<html><body><main>" + year(2019) + year(2020) + "<div class='links'>" +
                      "".join(f"<p><a href='/doc/{n}'>Policy document {n}</a></p>" for n in range(4)) +
                      "</div></main></body></html>")
    candidates = page_candidates(root, BASE)
    features = candidate_features(candidates, root, BASE)
    holds, lag = FEATURES.index("holds_newest_date"), FEATURES.index("newest_date_lag")

    def of(first: str, last: str) -> np.ndarray:
        return features[next(i for i, c in enumerate(candidates)
                             if c.texts[0].startswith(first) and c.texts[-1].startswith(last))]

    current, earlier = of("Board meeting, 1/12/2020", "Board meeting, 6/12/2020"), of("Board meeting, 1/12/2019",
                                                                                      "Board meeting, 6/12/2019")
    both, undated = of("Board meeting, 1/12/2019", "Board meeting, 6/12/2020"), of("Policy", "Policy")
    assert (current[holds], current[lag]) == (both[holds], both[lag]) == (1.0, 0.0)
    assert earlier[holds] == 0.0 and 0.7 < earlier[lag] < 1.0  # 6/12/2019 is a year before 6/12/2020
    assert (undated[holds], undated[lag]) == (0.0, 1.0)


def _meetings(prefix: str) -> str:
    return "<ul class='meetings'>" + "".join(f"<li><a href='/m/{prefix}{i}'>Board meeting {prefix}{i}</a> March {i}, "
                                             "2026</li>" for i in range(1, 4)) + "</ul>"


def test_a_list_split_in_parts_built_alike_is_also_one_candidate_of_all_its_records_in_page_order():
    # Upcoming meetings in the main column, past ones under a note in the side column: no region holds both.
    root = parse_html(f"<html><body><main><div class='row'><div class='col-8'><h2>Upcoming</h2>{_meetings('u')}</div>"
                      "<div class='col-4'><h3>Past</h3><div class='box'><img src='a.png'><p>Minutes are posted within "
                      f"a month of each meeting.</p></div>{_meetings('p')}</div></div></main></body></html>")
    unions = [c for c in page_candidates(root, BASE) if c.generator == "union"]
    assert [[text.split(" March")[0] for text in union.texts] for union in unions] == [
        [f"Board meeting {prefix}{i}" for prefix in "up" for i in range(1, 4)]]


def _year(year: int, links: list[list[str]]) -> str:
    """A year's meetings under its heading, each linking the documents it has yet."""
    items = "".join(f"<li>Tuesday, March {day}, {year} " + " &bull; ".join(
        f"<a href='/docs/{year}-{day}-{name}.pdf'>{name}</a>" for name in names) + "</li>"
        for day, names in zip((5, 12, 19, 26), links))
    return f"<h4>{year}</h4><ul>{items}</ul>"


def test_a_years_lists_read_as_the_records_of_a_coarser_list_are_still_one_list_split_in_parts():
    # The two years' lists are siblings alike, so a coarser reading takes each list as one record; every meeting
    # names its day, so the lists are parts of one list, not a record's fields.
    years = _year(2019, [["Agenda"], ["Agenda", "Minutes"], [], []]) + _year(2018, [["Agenda", "Minutes"]] * 3)
    root = parse_html(f"<html><body><main><div><p>Meetings are held at noon.</p>{years}</div></main></body></html>")
    unions = [c for c in page_candidates(root, BASE) if c.generator == "union"]
    assert [[text.split(" Agenda")[0] for text in union.texts] for union in unions] == [
        [f"Tuesday, March {day}, 2019" for day in (5, 12, 19, 26)] + [f"Tuesday, March {day}, 2018"
                                                                      for day in (5, 12, 19)]]


def test_a_block_of_the_latest_items_beside_the_whole_list_is_no_part_of_it():
    latest = "<ul class='meetings'>" + "".join(f"<li><a href='/m/u{i}'>Board meeting u{i}</a> March {i}, 2026</li>"
                                               for i in range(1, 3)) + "</ul>"
    # Both blocks built alike, side by side: the latest two are the whole list's first two, shown again.
    root = parse_html(f"<html><body><main><div class='row'><div class='latest'><h3>Latest</h3>{latest}</div>"
                      f"<div class='all'><h2>Meetings</h2>{_meetings('u')}</div></div></main></body></html>")
    assert not [c for c in page_candidates(root, BASE) if c.generator == "union"]


def test_the_cells_of_a_tables_rows_are_no_list_split_in_parts():
    rows = "".join(f"<tr><td><a href='/m/{i}'>Meeting {i}</a></td><td>March {i}, 2026</td></tr>" for i in range(1, 6))
    candidates = page_candidates(parse_html(f"<html><body><main><table>{rows}</table></main></body></html>"), BASE)
    assert not [c for c in candidates if c.generator == "union"]


def test_the_names_a_page_gives_a_candidates_block_are_features():
    def items(kind: str) -> str:
        return "".join(f'<li><a href="/{kind}/{n}">{kind} item {n} with some words</a></li>' for n in range(4))

    root = parse_html(f"<html><body><div id='mainContent'><section class='search_results'><ul>{items('result')}</ul>"
                      f"</section></div><div class='carousel__stage'><ul>{items('promo')}</ul></div>"
                      f"<div class='box'><ul>{items('other')}</ul></div></body></html>")
    candidates = page_candidates(root, BASE)
    features = candidate_features(candidates, root, BASE)
    aside, main = FEATURES.index("named_aside"), FEATURES.index("named_main")

    def named(first: str) -> tuple[float, float]:
        row = features[next(i for i, c in enumerate(candidates)
                            if c.records[0][0].tag == "li" and c.texts[0].startswith(first))]
        return row[aside], row[main]

    assert named("result item") == (0.0, 1.0)
    assert named("promo item") == (1.0, 0.0)
    assert named("other item") == (0.0, 0.0)


def test_items_of_one_class_that_add_classes_of_their_own_are_one_candidate():
    # Each post carries its own id class, every third item a position class: no two share a class set, all
    # share "post": one group of the nine, in page order. The baseline's grouping (tag and class set) is unchanged.
    def post(n: int) -> str:
        extra = " clearLeft" if n % 3 == 0 else ""
        return (f'<article class="post post-{n}{extra}"><h2><a href="/p/{n}">Post {n} title</a></h2>'
                f"<p>March {n}, 2024: what happened at meeting {n}</p></article>")

    html = ("<html><body><main><div class='list'>" + "".join(post(n) for n in range(1, 10)) +
            "<article class='teaser'><p>Subscribe</p></article></div></main></body></html>")
    groups = list(sibling_groups(parse_html(html), 2, shared_classes=True))
    assert len(groups) == 1
    assert [element.get("class").split()[1] for element in groups[0]] == [f"post-{n}" for n in range(1, 10)]
    assert list(sibling_groups(parse_html(html), 2)) == []
    candidates = page_candidates(parse_html(html), BASE)
    assert [len(c.records) for c in candidates if c.texts[0].startswith("Post 1 title")] == [9]


def _pages(seed: int, count: int = 150) -> list[tuple[np.ndarray, np.ndarray]]:
    """Synthetic pages where the best candidate is the one with the highest first feature."""
    rng = np.random.default_rng(seed)
    pages = []
    for _ in range(count):
        x = rng.normal(size=(6, len(FEATURES))).astype(np.float32)
        y = np.zeros(6, dtype=np.float32)
        y[int(np.argmax(x[:, 0]))] = 1.0
        pages.append((x, y))
    return pages


def test_a_page_of_hundreds_of_candidates_describes_its_largest_as_if_all_were_described():
    # Many small lists (tag clouds, facets) beside the page's main list.
    facets = "".join(f'<div class="facet{n}">' + "".join(f"<span>f{n} value {k}</span>" for k in range(3)) + "</div>"
                     for n in range(MAX_DESCRIBED + 20))
    root = parse_html(_page().replace("</main>", f"{facets}</main>"))
    candidates = page_candidates(root, BASE)
    assert len(candidates) > MAX_DESCRIBED
    described = shortlist(candidates)
    assert len(described) == MAX_DESCRIBED and described == sorted(described)
    letters = sorted((c.letters for c in candidates), reverse=True)
    assert min(candidates[i].letters for i in described) >= letters[MAX_DESCRIBED - 1]
    # Page-relative features (letter rank, candidates on the page) count every candidate, described or not.
    assert np.array_equal(candidate_features(candidates, root, BASE, described=described),
                          candidate_features(candidates, root, BASE)[described])


def test_the_ranker_learns_to_rank_within_pages_and_survives_save_and_load(tmp_path):
    # Chance picks one of 6; the other features are noise (at 150 pages, ~0.8 depending on the draw).
    ranker = train_ranker(_pages(0, count=300), rounds=60, members=2)
    held_out = _pages(1)
    right = sum(ranker.choose(x) == int(np.argmax(y)) for x, y in held_out)
    assert right >= 0.8 * len(held_out)
    path = tmp_path / "ranker.pt"
    ranker.save(path)
    loaded = ListRanker.load(path)
    x = held_out[0][0]
    assert np.array_equal(loaded.scores(x), ranker.scores(x))
    assert loaded.choose(np.zeros((0, len(FEATURES)), dtype=np.float32)) is None


def test_the_trees_walked_here_score_every_candidate_as_lightgbm_does():
    import lightgbm

    # Features rounded to tenths put many candidates exactly on a split's threshold, where a walk that compares
    # otherwise than LightGBM (< for <=, single precision) would go the other way.
    pages = [(np.round(x, 1), y) for x, y in _pages(2)]
    features = np.concatenate([x for x, _ in pages])
    grades = np.concatenate([y * 10 for _, y in pages]).astype(np.int32)
    boosters = [lightgbm.train(TRAINING | {"seed": seed}, lightgbm.Dataset(features, grades, group=[6] * len(pages)),
                               num_boost_round=40) for seed in (0, 1)]
    ranker = ListRanker.from_lightgbm(boosters)
    expected = np.mean([booster.predict(features) for booster in boosters], axis=0)
    assert np.abs(ranker.scores(features) - expected).max() < 1e-9
    assert len(ranker.roots) == 80 and ranker.members == 2


def test_a_forest_with_a_tree_of_one_leaf_and_a_lopsided_one_scores_as_walked_by_hand():
    # Tree 1: one leaf (0.5). Tree 2: x0 <= 1 ? 1.0 : (x1 <= 2 ? 2.0 : (x0 <= 3 ? 3.0 : 4.0)) — its right
    # spine three levels deep, feature 0 asked twice on the way.
    ranker = ListRanker(roots=np.array([~0, 2]), split_feature=np.array([0, 1, 0]),
                        threshold=np.array([3.0, 2.0, 1.0]), left=np.array([~3, ~2, ~1]), right=np.array([~4, 0, 1]),
                        leaf_value=np.array([0.5, 1.0, 2.0, 3.0, 4.0]), members=1)
    features = np.zeros((5, len(FEATURES)))
    features[:, :2] = [[1.0, 0.0], [2.0, 2.0], [2.0, 5.0], [4.0, 5.0], [3.0, 9.0]]
    assert ranker.scores(features).tolist() == [1.5, 2.5, 3.5, 4.5, 3.5]


def test_a_ranker_file_of_another_format_or_feature_set_is_refused(tmp_path):
    ranker = train_ranker(_pages(0), rounds=2, members=1)
    path = tmp_path / "ranker.pt"
    ranker.save(path)
    saved = torch.load(path, weights_only=True)
    torch.save(saved | {"features": list(FEATURES[:-1])}, path)
    with pytest.raises(ModelVersionError):
        ListRanker.load(path)
    torch.save(saved | {"format_version": 1}, path)
    with pytest.raises(ModelVersionError):
        ListRanker.load(path)


def test_nothing_to_rank_is_a_clear_error():
    with pytest.raises(ValueError, match="nothing to rank"):
        train_ranker([(np.zeros((1, len(FEATURES)), dtype=np.float32), np.ones(1, dtype=np.float32))])
