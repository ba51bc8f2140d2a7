"""A list's next slice named by its URL alone (models.pagination.continuation)."""

from models.pagination.continuation import continuation_link

PAGE = "https://museum.example.org/events/"


def test_an_offset_moved_on_by_the_items_listed_is_the_next_slice():
    links = ["", PAGE + "?sort=date", "https://museum.example.org/about/", PAGE + "?offset=10"]
    assert continuation_link(PAGE, links, listed=10) == 3
    assert continuation_link(PAGE + "?offset=10", [PAGE + "?offset=20"], listed=10) == 0
    assert continuation_link(PAGE + "?offset=10", [PAGE + "?offset=15"], listed=10) is None


def test_a_page_number_moved_on_by_one_is_the_next_slice():
    assert continuation_link(PAGE, [PAGE + "?page=2"], listed=12) == 0
    assert continuation_link(PAGE + "?page=2", [PAGE + "?page=1", PAGE + "?page=3"], listed=12) == 1
    assert continuation_link(PAGE + "?page=2", [PAGE + "?page=4"], listed=12) is None
    # the page's other parameters are kept; a link that changes two of them is something else
    assert continuation_link(PAGE + "?lang=de", [PAGE + "?lang=de&page=2"], listed=3) == 0
    assert continuation_link(PAGE + "?lang=de", [PAGE + "?lang=en&page=2"], listed=3) is None


def test_a_parameter_offering_several_values_ahead_is_a_menu_not_a_slice():
    categories = [PAGE + f"?cat={n}" for n in range(1, 8)]
    assert continuation_link(PAGE, categories, listed=6) is None
    sections = [PAGE.replace("/events/", "/list.php") + f"?id={n}" for n in (7, 9, 10)]
    assert continuation_link(PAGE.replace("/events/", "/list.php") + "?id=8", sections, listed=20) is None


def test_the_lists_own_item_links_and_other_paths_are_never_taken():
    item = PAGE + "?id=2"
    assert continuation_link(PAGE, [item], listed=4, items=[item]) is None
    assert continuation_link(PAGE, ["https://museum.example.org/news/?page=2"], listed=4) is None
    assert continuation_link(PAGE, ["https://other.example.org/events/?page=2"], listed=4) is None
    assert continuation_link(PAGE, [PAGE + "?page=2&page=3"], listed=4) is None
    assert continuation_link(PAGE, [PAGE + "?page=2"], listed=0) is None
    assert continuation_link("http://[bad", [PAGE + "?page=2"], listed=3) is None
