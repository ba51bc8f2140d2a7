"""A record's place: marked up, or written after a label; never a whole card, never a price."""

from models.records.extraction import build_record, prepare_page
from models.records.main_list import extract_records
from models.web.dom import parse_html

BASE = "https://club.example.org/events/"


def _record(html: str):
    root = parse_html(f"<html><body>{html}</body></html>")
    prepare_page(root)  # as the extraction reads a page: blocks and `<br>` lines apart
    return build_record([root.find("body")[0]], BASE, 0)


def test_a_place_marked_up_is_read_without_its_label():
    assert _record('<div><a href="/e/1">Board meeting</a> <span class="event-location">Location: City Hall, '
                   'Room 1006</span></div>').place == "City Hall, Room 1006"
    assert _record('<li><a href="/e/2">Talk</a><address>12 Rue de Rivoli, Paris</address></li>').place == \
        "12 Rue de Rivoli, Paris"
    assert _record('<li><a href="/e/3">Talk</a><span itemprop="location">Town hall</span></li>').place == "Town hall"


def test_a_place_written_after_a_label_is_read_up_to_the_next_label():
    record = _record('<p><a href="/e/4">Finance committee</a> Date: March 3, 2024 Location: Fisher Building, 12th '
                     'Floor Time: 6:00 pm</p>')
    assert record.place == "Fisher Building, 12th Floor"
    assert _record('<p><a href="/e/5">Sommerfest</a> Ort: Stadtpark | Eintritt frei</p>').place == "Stadtpark"
    # A label of any other kind ends the place, but an address goes on with its venue.
    assert _record('<li><a href="/k/1">IDK-Konferenz 2024</a><p>Ort: Münster<br>Zeitraum: 08.11. bis 09.11.2024</p>'
                   '</li>').place == "Münster"
    assert _record('<p><a href="/e/6">Commission</a> Location: Janik\'s Cafe Address: 2011 W Division St.</p>'
                   ).place == "Janik's Cafe Address: 2011 W Division St."


def test_a_labelled_place_on_a_line_of_its_own_ends_with_that_line():
    record = _record('<div><h1><a href="/a/1">Quiz and pizza</a></h1><p>Join us for a quiz!</p><p>Lokasjon: kl 19:30 '
                     'på <a href="https://maps.example/1">Samfunnet Bislet</a>!</p><p>Påmelding: sign up here</p></div>')
    assert record.place == "kl 19:30 på Samfunnet Bislet!"
    # An address on the next line goes on with its venue; the blurb after it does not.
    record = _record('<div><a href="/m/1">Clean and green committee</a><div>Place: Janik\'s Cafe</div><div>Address: '
                     '2011 W Division St.</div><div>1st Monday of the month @ 9am. The committee meets.</div></div>')
    assert record.place == "Janik's Cafe, 2011 W Division St."


def test_a_place_after_a_pin_is_read_from_the_pins_element():
    assert _record('<a href="/e/7"><div>Retreat</div><div>🕐 9:00</div><div>📍 Salón principal · Iglesia Betel</div>'
                   '<div>Free entry</div></a>').place == "Salón principal · Iglesia Betel"
    # The pin alone in an icon's element: the place follows that element.
    assert _record('<li><a href="/e/8">Picnic</a> <span class="icon">📍</span> Riverside park <b>Bring food</b>'
                   '</li>').place == "Riverside park"


def test_no_place_where_the_record_shows_none_or_only_looks_like_one():
    assert _record('<div><a href="/n/1">News of the week</a> March 3, 2024</div>').place == ""
    # A whole card marked as a place is a place card, not a place; a price in "local" currency is no place.
    assert _record('<div class="location-card"><a href="/p/1">Our office</a> open daily</div>').place == ""
    assert _record('<div><a href="/s/1">Shoe</a><span class="local price">$150</span></div>').place == ""


def test_the_places_of_a_listed_event_list_reach_its_records():
    rows = "".join(f'<li class="event"><h3><a href="/e/{n}">Meetup {n}</a></h3><span class="date">March {n}, 2024'
                   f'</span><span class="venue">Hall {n}</span></li>' for n in range(1, 6))
    records = extract_records(parse_html(f"<html><body><main><ul>{rows}</ul></main></body></html>"), BASE).records
    assert [record.place for record in records] == [f"Hall {n}" for n in range(1, 6)]
