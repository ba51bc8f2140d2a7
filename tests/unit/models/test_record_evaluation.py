"""How records are scored against labels: one-to-one matches, text compared as pages and labels write it."""

from datetime import UTC, datetime

from models.records.data import SnapshotList
from models.records.evaluation import estuka_prf, evaluate_snapshots, merged_away
from models.records.extraction import ExtractedRecord


def test_a_record_matches_a_label_whose_first_field_its_text_shows_once():
    texts = ["Monthly meetup 1 March 1, 2024", "Monthly meetup 2 March 2, 2024", "Imprint"]
    precision, recall, f1 = estuka_prf(texts, ["monthly MEETUP 1", "Monthly meetup 2", "Monthly meetup 3"])
    assert (precision, recall) == (2 / 3, 2 / 3)
    # One record answers for one label only.
    assert estuka_prf(["Monthly meetup 1 and 2"], ["Monthly meetup 1", "meetup 1 and 2"])[:2] == (1.0, 0.5)


def test_compatibility_forms_and_a_labels_encoding_faults_are_forgiven():
    texts = ["Caring for your HP® Notebook PC | HP Customer Sup... more",
             "Your information › Join AAdvantage › American Airlines",
             "ﬁnance ＆ tax"]
    labels = ["Caring for your HPÂ® Notebook PC | HP Customer Sup…",  # UTF-8 read as Windows-1252; "…"
              "Your information ? Join AAdvantage ? American Airlines",  # "?" for what an encoder could not write
              "finance & tax"]
    assert estuka_prf(texts, labels)[2] == 1.0


def test_a_question_mark_still_needs_a_character_and_the_rest_must_match():
    assert estuka_prf(["What is new"], ["What is new?"])[1] == 0.0
    assert estuka_prf(["Your information › Join AAdvantage"], ["Your information ? Join Delta"])[1] == 0.0
    assert estuka_prf(["What is new? Everything"], ["What is new?"])[1] == 1.0


def test_records_the_stream_would_take_for_one_item_are_counted():
    def record(url: str, title: str, day: int | None = None) -> ExtractedRecord:
        return ExtractedRecord(url, title, datetime(2024, 3, day, tzinfo=UTC) if day else None, title, 0, title)

    records = [record("/tags/appeal", "appeal"), record("/tags/appeal", "appeal"), record("/tags/appeal", "appeal"),
               record("/events/summit", "Summit", 1), record("/events/summit", "Summit", 2)]
    assert merged_away(records) == 2  # three cards as one item; two dated sessions stay two
    assert merged_away([]) == 0


def test_snapshot_link_recall_is_also_given_over_the_items_the_listing_links_and_titles_against_the_feed():
    def listing(name: str, href: str) -> SnapshotList:
        cards = "".join(f'<div class="card"><h3>Post number {n}</h3><p>About post {n}, in a few words.</p>'
                        f'<a href="{href}{n}">Read more</a></div>' for n in range(4))
        feed = {f"https://club.example/news/{n}": f"Post number {n}" if n < 2 else "Another title" for n in range(4)}
        page = ("https://club.example/news/", f"<html><body><main>{cards}</main></body></html>")
        return SnapshotList(name=name, pages=[page], item_urls=set(feed), item_titles=feed)
    # The second listing links its items to another site's pages: its four items count in the plain figure only.
    result = evaluate_snapshots([listing("own", "/news/"), listing("elsewhere", "https://video.example/watch/")])
    assert (result["items"], result["items_linked"]) == (8, 4)
    assert (result["item_link_recall"], result["linked_item_link_recall"]) == (0.5, 1.0)
    assert result["title_accuracy"] == 0.5  # the heading is the title; two of the feed's titles differ
    assert result["pages_without_a_list"] == {}
    empty = SnapshotList(name="empty", pages=[("https://club.example/events/", "<html><body><script>draw()</script>"
                                              "</body></html>")], item_urls={"https://club.example/events/1"})
    assert evaluate_snapshots([empty])["pages_without_a_list"] == {"no_text": 1}
