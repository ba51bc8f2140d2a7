"""Record extraction on real-shaped HTML: MDR regions, record fields, ranking, lists of pages, bad input."""

from datetime import UTC, datetime

from models.records.data_regions import TAG_STRING_CAP, TagStrings, element_children, find_data_regions
from models.records.extraction import letters_of, record_key, sibling_group_baseline
from models.records.main_list import extract_list, extract_records
from models.records.ranker import LargestRegion
from models.web.dom import parse_html

BASE = "https://club.example.org/events/"
MENU = "<nav><ul>" + "".join(f'<li><a href="/{p}">{p.title()}</a></li>' for p in
                              ("home", "about", "events", "news", "contact", "join")) + "</ul></nav>"


def _event(number: int, thumbnail: bool = False, highlight: bool = False) -> str:
    image = f'<img src="/img/{number}.jpg" alt="">' if thumbnail else ""
    title = f"<em>Monthly</em> meetup {number}" if highlight else f"Monthly meetup {number}"
    return (f'<li class="event">{image}<h3><a href="/events/{number}/">{title}</a></h3>'
            f'<p class="when">March {number}, 2024</p><p>Talks, pizza and a long discussion of item {number}.</p></li>')


def _page(items: str, extra: str = "") -> str:
    return f"<html><head><title>Events</title></head><body>{MENU}<main><h1>Events</h1>{extra}<ul>{items}</ul></main>" \
           f"<footer><ul><li><a href='/imprint'>Imprint</a></li><li><a href='/privacy'>Privacy</a></li></ul></footer>" \
           f"</body></html>"


def test_a_list_with_varying_records_is_one_region_of_all_its_items():
    # Optional thumbnails and highlighted words change the tag strings; the records stay one region.
    html = _page("".join(_event(n, thumbnail=n % 3 == 0, highlight=n % 4 == 0) for n in range(1, 13)))
    records = extract_records(parse_html(html), BASE).records
    assert [r.item_url for r in records] == [f"https://club.example.org/events/{n}/" for n in range(1, 13)]
    first = records[0]
    assert first.title == "Monthly meetup 1"
    assert first.date == datetime(2024, 3, 1, tzinfo=UTC)
    assert first.snippet.startswith("Monthly meetup 1 March 1, 2024 Talks")
    assert [r.position for r in records] == list(range(12))


def test_the_menu_and_footer_are_not_chosen_over_the_content():
    html = _page("".join(_event(n) for n in range(1, 4)))
    titles = [r.title for r in extract_records(parse_html(html), BASE).records]
    assert titles == ["Monthly meetup 1", "Monthly meetup 2", "Monthly meetup 3"]


def test_an_interloper_between_records_does_not_split_the_region():
    items = "".join(_event(n) for n in range(1, 5)) + '<li class="ad"><div><span>Advert</span></div></li>' + \
        "".join(_event(n) for n in range(5, 9))
    records = extract_records(parse_html(_page(items)), BASE).records
    assert len(records) == 8


def test_records_spanning_two_table_rows_are_generalized_nodes():
    rows = "".join(f'<tr><td><a href="/t/{n}">Session {n} title</a></td></tr><tr><td>Room {n}, 2024-05-{n:02d} 10:00'
                   f' with <b>speaker {n}</b> and panel</td></tr>' for n in range(1, 7))
    html = f"<html><body><table>{rows}</table></body></html>"
    records = extract_records(parse_html(html), BASE).records
    assert len(records) == 6
    assert records[2].item_url == "https://club.example.org/t/3"
    assert records[2].date == datetime(2024, 5, 3, 10, 0, tzinfo=UTC)
    assert "Room 3" in records[2].text and "Session 3" in records[2].text


def _meetings_table(years: dict[int, range]) -> str:
    """A meetings table as council sites write it: a row of header cells whose label links re-sort the table,
    then each year's meetings under a row of one cell across the columns."""
    header = ('<tr><th><a href="?order=date">Date/time</a></th><th>Meeting name</th><th>Location</th>'
              '<th>Attachments</th></tr>')
    rows = "".join(f'<tr><td colspan="4"><strong>{year} Meetings</strong></td></tr>' + "".join(
        f'<tr><td>{month:02d}/14/{year} 10:00 A.M.</td><td>Regular Board Meeting</td><td>Board Room</td>'
        f'<td><a href="/docs/{year}-{month:02d}-notice.pdf">Meeting Notice</a></td></tr>' for month in months)
        for year, months in years.items())
    return f"<html><body><main><h1>Notices, agendas and minutes</h1><table>{header}{rows}</table></main></body></html>"


def test_a_tables_column_labels_and_group_labels_are_no_records():
    first = extract_records(parse_html(_meetings_table({2019: range(1, 7), 2018: range(1, 7)})), BASE)
    assert [record.item_url for record in first.records] == [
        f"https://club.example.org/docs/{year}-{month:02d}-notice.pdf" for year in (2019, 2018) for month in range(1, 7)]
    # A revisit of the table in a new year: one meeting so far, read with the first read's template.
    later = extract_records(parse_html(_meetings_table({2020: range(1, 2)})), BASE, first.template)
    assert [record.item_url for record in later.records] == ["https://club.example.org/docs/2020-01-notice.pdf"]


def test_invisible_marks_editors_leave_are_not_part_of_a_records_words():
    items = "".join(f'<li><a href="/m/{n}">\u200bMinutes of meeting {n}\ufeff</a> <span>May {n}, 2024</span></li>'
                    for n in range(1, 5))
    records = extract_records(parse_html(_page(items)), BASE).records
    assert [record.title for record in records] == [f"Minutes of meeting {n}" for n in range(1, 5)]
    assert records[0].text == "Minutes of meeting 1 May 1, 2024"


def test_a_grid_of_cards_in_rows_gives_the_cards_as_records():
    card = '<div class="card"><a href="/c/{n}"><img src="x.png"><span>Card {n} title</span></a><p>About {n}</p></div>'
    rows = "".join('<div class="row">' + "".join(card.format(n=r * 3 + c) for c in range(3)) + "</div>"
                   for r in range(4))
    records = extract_records(parse_html(f"<html><body><main>{rows}</main></body></html>"), BASE).records
    assert len(records) == 12
    assert records[4].title == "Card 4 title"


def test_a_wrapper_region_gives_way_to_the_finer_region_inside_it():
    column = '<div class="col"><h2>Column</h2><ul>{}</ul></div>'
    html = "<html><body><main>" + column.format("".join(_event(n) for n in range(1, 9))) + \
        column.format("<li>Nothing else</li>") + "</main></body></html>"
    records = extract_records(parse_html(html), BASE).records
    assert len(records) == 8


def test_script_and_hidden_text_is_not_record_text():
    hidden = '<div style="display:none">' + "".join(f"<p>hidden paragraph number {n} " * 20 + "</p>" for n in range(9)) + \
        "</div>"
    html = _page("".join(_event(n) for n in range(1, 4)), extra=hidden + "<script>var x = 1;</script>")
    records = extract_records(parse_html(html), BASE).records
    assert [r.title for r in records] == ["Monthly meetup 1", "Monthly meetup 2", "Monthly meetup 3"]
    assert all("var x" not in r.text for r in records)


def _hidden_store_page(visible_list: str = "") -> str:
    """An events page whose cards wait in a hidden store for the page's script to deal them into grids."""
    cards = "".join(f'<a class="ev-card" href="/events/{n}/"><div class="ev-date">March {n}, 2024</div>'
                    f'<div class="ev-body"><div class="ev-type">Meetup</div><div class="ev-title">Monthly meetup {n}'
                    f'</div><div class="ev-info">Talks and pizza</div></div></a>' for n in range(1, 6))
    return _page(visible_list, extra=f'<div id="all" style="display:none" aria-hidden="true">{cards}</div>'
                                     '<div class="grid" id="upcoming"></div><div class="grid" id="past"></div>')


def test_a_list_the_page_hides_for_its_script_to_show_is_read_when_nothing_visible_is_a_list():
    extraction = extract_records(parse_html(_hidden_store_page()), BASE)
    assert extraction.from_hidden
    # A card wrapped whole in its link and without a heading is titled by the element its class calls the title.
    assert [(r.title, r.date.day, r.item_url) for r in extraction.records] == [
        (f"Monthly meetup {n}", n, f"https://club.example.org/events/{n}/") for n in range(1, 6)]


def test_hidden_elements_stay_unread_where_the_visible_page_shows_a_list():
    extraction = extract_records(parse_html(_hidden_store_page("".join(_event(n) for n in range(10, 13)))), BASE)
    assert not extraction.from_hidden
    assert [r.title for r in extraction.records] == ["Monthly meetup 10", "Monthly meetup 11", "Monthly meetup 12"]


def test_empty_elements_between_records_are_no_records():
    # `<p><p>…</p></p>` parses as an empty `<p>` before each paragraph: MDR's region holds them, its records not.
    paragraphs = "".join(f"<p><p>Meeting {n} of the student society, where members review the year and vote.</p></p>"
                         for n in range(1, 4))
    records = extract_records(parse_html(f"<html><body><main><div>{paragraphs}</div></main></body></html>"),
                              BASE).records
    assert [r.text for r in records] == [f"Meeting {n} of the student society, where members review the year and "
                                         "vote." for n in range(1, 4)]


def test_item_links_are_absolute_and_scripts_fragments_and_mail_are_not_item_links():
    items = "".join(f'<li><a href="{href}">Entry with a long enough title {n}</a> some words</li>'
                    for n, href in enumerate(["../e/1", "#top", "javascript:open(2)", "mailto:x@y.z",
                                              "https://other.org/e/4#details"]))
    records = extract_records(parse_html(f"<html><body><ul>{items}</ul></body></html>"), BASE).records
    assert [r.item_url for r in records] == ["https://club.example.org/e/1", "", "", "", "https://other.org/e/4"]
    assert records[1].title == "Entry with a long enough title 1"


def test_pages_without_repeated_structure_have_no_records():
    for html in ("", "<html><body><p>Just one paragraph.</p></body></html>", "<<<>>>", "\x00\x01binary",
                 "<html><body>" + "<div>" * 5000 + "deep" + "</div>" * 5000 + "</body></html>"):
        extraction = extract_records(parse_html(html), BASE)
        assert extraction.records == [] and extraction.template == ""


def test_a_paginated_list_is_read_with_one_template_and_each_item_kept_once():
    page_one = _page("".join(_event(n) for n in range(1, 6)))
    # Page 2 repeats item 5 (a list that shifted) and has a longer sidebar list that would win on its own.
    sidebar = '<div class="side"><ol>' + "".join(f'<li><a href="/tag/{n}">Tag {n} with a long description of the tag '
                                                f'and its many uses in the club</a></li>' for n in range(12)) + "</ol></div>"
    page_two = _page("".join(_event(n) for n in range(5, 8)), extra=sidebar)
    # The largest region alone reads the sidebar on page 2; the first page's template keeps the list.
    alone = extract_records(parse_html(page_two), BASE + "page/2/", ranker=LargestRegion()).records
    assert "Tag 0" in alone[0].title
    first, second = extract_list([(parse_html(page_one), BASE), (parse_html(page_two), BASE + "page/2/")],
                                 ranker=LargestRegion())
    assert len(first.records) == 5
    assert [r.title for r in second.records] == ["Monthly meetup 6", "Monthly meetup 7"]
    assert first.template and first.template == second.template


def test_record_keys_tell_two_events_that_share_a_link_apart():
    items = "".join(f'<li><a href="https://conf.example/2024">Conference day {n} keynote</a> hall {n}</li>'
                    for n in (1, 2, 3))
    records = extract_records(parse_html(f"<html><body><ul>{items}</ul></body></html>"), BASE).records
    assert len({record_key(r) for r in records}) == 3


def _card(slug: str, title: str, tag: str = "appeal") -> str:
    # A theme's news card: an image link and a title link to the post, and a tag link every card shows.
    return (f'<div class="column"><div class="card"><figure><a href="/news/{slug}/"><img src="/{slug}.jpg" '
            f'alt="{title}"></a></figure><div class="card-content"><a class="title" href="/news/{slug}/">{title}'
            f'</a><p class="tags"><a href="/tags/{tag}">{tag}</a></p></div></div></div>')


def test_a_link_every_record_shows_does_not_stand_for_an_item():
    # "Santa" is shorter than the tag "appeal": the longest link text alone took the tag page for the post, and
    # both cards — one link, one title, no date — for one item.
    html = f"<html><body><main><div class='columns'>{_card('santa', 'Santa')}{_card('fair', 'Fair')}</div></main></body></html>"
    records = extract_records(parse_html(html), BASE).records
    assert [(r.item_url, r.title) for r in records] == [("https://club.example.org/news/santa/", "Santa"),
                                                        ("https://club.example.org/news/fair/", "Fair")]
    assert len({record_key(r) for r in records}) == 2


def test_a_label_on_each_records_own_link_leaves_the_title_to_the_records_words():
    # A meeting calendar: each row links its committee (each committee meets twice) and its own details page.
    meetings = ((4, "parks"), (11, "budget"), (18, "parks"), (25, "budget"))
    rows = "".join(f'<tr><td><a href="/committees/{committee}">Committee on {committee.title()}</a></td>'
                   f'<td>March {day}, 2024</td><td><a href="/meetings/{day}">Meeting details</a></td></tr>'
                   for day, committee in meetings)
    html = f"<html><body><main><table>{rows}</table></main></body></html>"
    records = extract_records(parse_html(html), BASE).records
    assert [(r.item_url, r.title) for r in records] == [
        (f"https://club.example.org/meetings/{day}", f"Committee on {committee.title()}") for day, committee in meetings]


def test_a_card_whose_heading_is_not_a_link_is_titled_by_its_heading_not_its_button():
    # A news grid: each card's title is an unlinked heading and its only link a "Read more…" button.
    titles = ("Spring workshop", "Summer camp report", "Board election results")
    cards = "".join(f'<div class="grid-item"><h3>{title}</h3><p>What happened at the {title.lower()}, in a few '
                    f'words.</p><a class="btn" href="/news/{n}/">Read more…</a></div>' for n, title in enumerate(titles))
    html = f"<html><body><main><div class='grid'>{cards}</div></main></body></html>"
    records = extract_records(parse_html(html), BASE).records
    assert [(r.item_url, r.title) for r in records] == [
        (f"https://club.example.org/news/{n}/", title) for n, title in enumerate(titles)]


def test_a_card_wrapped_whole_in_its_link_is_titled_by_the_heading_inside_it():
    # A conference list: each card links the conference's own site; the heading holds its name and dates.
    events = (("sido", "SIdO", 6), ("summit", "Smart Summit", 12), ("iot", "IoT Day", 20))
    cards = "".join(f'<div class="col"><a href="https://{slug}.example/"><div class="event"><h3>{name}<br>'
                    f'<span class="date">Apr {day}-{day + 1}, 2016</span></h3><p>Lyon, France</p></div></a></div>'
                    for slug, name, day in events)
    records = extract_records(parse_html(f"<html><body><main><div class='row'>{cards}</div></main></body></html>"),
                              BASE).records
    assert [(r.title, r.date.day) for r in records] == [("SIdO Apr 6-7, 2016", 6), ("Smart Summit Apr 12-13, 2016", 12),
                                                        ("IoT Day Apr 20-21, 2016", 20)]


def test_a_heading_link_is_the_item_even_where_records_share_it():
    # Two sessions of one event, each with its own booking link: the heading names the item.
    items = "".join(f'<li><h3><a href="/events/summit/">Summit</a></h3><p>Session {n}, May {n}, 2024</p>'
                    f'<a href="/book?session={n}">Book a seat for this session now</a></li>' for n in (1, 2, 3))
    records = extract_records(parse_html(f"<html><body><main><ul>{items}</ul></main></body></html>"), BASE).records
    assert {(r.item_url, r.title) for r in records} == {("https://club.example.org/events/summit/", "Summit")}
    assert len({record_key(r) for r in records}) == 3  # told apart by their dates


def test_the_baseline_groups_siblings_by_tag_and_class():
    items = "".join(_event(n) for n in range(1, 6))
    records = sibling_group_baseline(parse_html(_page(items)), BASE)
    assert len(records) == 5


def test_regions_are_found_under_every_parent():
    html = "<html><body><ul><li>a</li><li>b</li></ul><ol><li>c</li><li>d</li><li>e</li></ol></body></html>"
    assert sorted(len(region.records) for region in find_data_regions(parse_html(html))) == [2, 3]


def test_tag_strings_are_each_subtrees_content_tags_in_pre_order_cut_at_the_cap():
    # The definition TagStrings' flat slices must keep: an element's tag, then its content children's
    # strings, cut at TAG_STRING_CAP; what holds no content (a script, an svg) is in no ancestor's string.
    def reference(element) -> tuple:
        codes = [element.tag]
        for child in element_children(element):
            codes.extend(reference(child))
        return tuple(codes[:TAG_STRING_CAP])

    deep = "<div>" + "<p><b>x</b><i>y</i></p>" * 120 + "</div>"  # 361 tags: cut
    html = (f"<html><body><ul><li><a>a</a><!-- note --><script>s()</script></li><li><svg><g><path/></g></svg>b</li>"
            f"</ul>{deep}{deep}<table><tr><td>1</td><td>2</td></tr></table></body></html>")
    body = parse_html(html).find("body")
    tags = TagStrings(body)
    names = {code: name for name, code in tags.codes.items()}
    elements = [element for element in body.iter() if isinstance(element.tag, str)]
    for element in elements:
        assert tuple(names[code] for code in tags.of(element)) == reference(element), element.tag
    assert any(len(tags.of(element)) == TAG_STRING_CAP for element in elements)
    for parent in elements:
        children = tags.children(parent)
        assert children == element_children(parent)
        for size in (2, 3):
            for start in range(len(children) - size + 1):
                group = children[start:start + size]
                joined = tuple(code for child in group for code in tags.of(child))[:TAG_STRING_CAP * 2]
                assert tags.of_group(group) == joined


def test_the_two_largest_regions_texts_are_exposed_for_the_page_classifier():
    sidebar = "<aside><ul>" + "".join(f'<li><a href="/t/{n}">tag {n}</a></li>' for n in range(4)) + "</ul></aside>"
    html = _page("".join(_event(n) for n in range(1, 5)), extra='<div class="side"><ol>' + "".join(
        f"<li>Opening hour {n} of the library</li>" for n in range(3)) + "</ol></div>" + sidebar)
    largest, second = extract_records(parse_html(html), BASE).region_texts
    assert largest.startswith("Monthly meetup 1") and "Monthly meetup 4" in largest
    assert second.startswith("Opening hour 0") and "tag" not in second  # the aside is navigation


def test_meetings_written_one_per_line_become_records():
    lines = "<br>".join(f'<a href="/m/{n}">Board meeting</a> – January {n}, 2024, 6:00 pm, City Hall room {n}'
                        for n in range(1, 7))
    html = f"<html><body><main><h1>Meetings</h1><p>{lines}</p><p>Contact the clerk.</p></main></body></html>"
    records = extract_records(parse_html(html), BASE).records
    assert [r.item_url for r in records] == [f"https://club.example.org/m/{n}" for n in range(1, 7)]
    assert records[3].date == datetime(2024, 1, 4, 18, tzinfo=UTC) and "room 4" in records[3].text


def test_a_definition_list_pairs_terms_and_descriptions():
    pairs = "".join(f'<dt><a href="/d/{n}">Workshop {n}</a></dt><dd>Hands-on session number {n}, bring a laptop</dd>'
                    for n in range(1, 6))
    records = extract_records(parse_html(f"<html><body><dl>{pairs}</dl></body></html>"), BASE).records
    assert len(records) == 5
    assert records[1].title == "Workshop 2" and "bring a laptop" in records[1].text


def test_a_revisit_reads_the_list_not_a_menu_built_like_it():
    # The menu and the list are both a bare `ul` of `li` under `body`: the same template. The first read's
    # choice is the list; a later read of the grown list must not take the menu for it.
    def page(numbers) -> str:
        menu = "<ul>" + "".join(f'<li><a href="/{p}">{p.title()}</a></li>' for p in ("home", "about", "news")) + "</ul>"
        items = "".join(f'<li><a href="/news/{n}/">Neighbourhood meeting number {n} on the square</a> '
                        f"<span>March {n}, 2024</span></li>" for n in numbers)
        return f"<html><body>{menu}<ul>{items}</ul></body></html>"

    first = extract_records(parse_html(page(range(5, 0, -1))), BASE)
    assert [r.item_url for r in first.records][:1] == ["https://club.example.org/news/5/"]
    later = extract_records(parse_html(page(range(9, 0, -1))), BASE, first.template)
    assert [r.item_url for r in later.records][:2] == ["https://club.example.org/news/9/",
                                                       "https://club.example.org/news/8/"]
    assert len(later.records) == 9


def test_letters_are_counted_as_str_isalpha_counts_them_in_ascii_and_other_texts():
    for text in ("", "Meetup #12 — 3 May, 18:00!", "plain ascii_text 42", "Tür zu · 活動訊息 2024", "ǅ ²½ Ⅻ ﬁ"):
        assert letters_of(text) == sum(character.isalpha() for character in text)
