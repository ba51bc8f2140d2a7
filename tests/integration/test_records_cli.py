"""`sourcewatch eval records` as users run it, on (parts of) the real data sets."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import cli_json, run_cli

pytestmark = pytest.mark.data


def test_estuka_figures_cross_validated_by_category_with_the_baseline(data_dir, tmp_path):
    # Two categories keep the run short (each read by a ranker trained on the other); the README's figures
    # come from all 12.
    categories = {"1- Arts", "14- Society"}
    for category in categories:
        shutil.copytree(data_dir / "records" / "estuka" / category, tmp_path / category)
    result = cli_json(["eval", "records", "--data", str(tmp_path)], {})
    assert result["data"] == "records" and "2 folds" in result["protocol"]["sourcewatch"]
    result = result["estuka"]
    assert result["pages"] == 60
    for figures in (result, result["largest_region"], result["baseline"]):
        assert 0 <= figures["precision"] <= 1 and 0 <= figures["recall"] <= 1 and 0 <= figures["f1"] <= 1
        assert figures["count_accuracy"] is None and figures["records_per_page"] > 0
        assert set(figures["by_category"]) == categories
    assert result["f1"] > result["baseline"]["f1"]


def test_cross_validation_needs_two_folds(data_dir, tmp_path):
    shutil.copytree(data_dir / "records" / "estuka" / "1- Arts", tmp_path / "1- Arts")
    done = run_cli(["eval", "records", "--data", str(tmp_path)], {})
    assert done.returncode == 2 and "two folds" in done.stderr


def test_estuka_and_city_scrapers_cross_validated_together_listing_and_detail_pages_apart(data_dir, tmp_path):
    shutil.copytree(data_dir / "records" / "estuka" / "5- Health", tmp_path / "estuka" / "5- Health")
    source = (data_dir / "records" / "city-scrapers").resolve()
    (tmp_path / "city-scrapers").mkdir()
    (tmp_path / "city-scrapers" / "labels.jsonl").write_text(
        "".join((source / "labels.jsonl").read_text().splitlines(True)[:60]))
    (tmp_path / "city-scrapers" / "fixtures").symlink_to(source / "fixtures")
    result = cli_json(["eval", "records", "--data", str(tmp_path)], {})
    assert result["data"] == "records" and set(result) >= {"estuka", "city-scrapers"}
    # One Estuka category and City Scrapers' site groups: each read by a ranker trained on the others.
    assert result["estuka"]["pages"] == 30 and set(result["estuka"]["by_category"]) == {"5- Health"}
    figures = result["city-scrapers"]
    assert figures["pages"] > 0 and figures["items"] > 0 and 0 <= figures["recall"] <= 1
    assert "detail_or_auxiliary" in figures and "recall" in figures["baseline"]
    assert figures["f1_is_recall"] == (figures["precision"] is None)


def test_snapshot_listings_are_read_whole_with_their_pagination(data_dir):
    result = cli_json(["eval", "records", "--data", str(data_dir / "sites")], {})
    flink = result["by_listing"]["flink-apache-org/posts"]
    assert flink["pages"] == 24 and flink["items"] == 237
    assert flink["item_link_recall"] == 1.0 and flink["records"] == 237  # every post once, nothing else
    assert result["item_recall"] >= result["item_link_recall"]
    # iot-eclipse links each news item to another site (a webcast, a video, a blog): no extractor can give
    # the feed's link there, and the figure over the items the listings link leaves those out.
    eclipse = result["by_listing"]["iot-eclipse/news"]
    assert eclipse["items"] == 76 and eclipse["items_linked"] == 0
    assert result["items_linked"] == sum(listing["items_linked"] for listing in result["by_listing"].values())
    assert result["linked_item_link_recall"] > result["item_link_recall"]
    assert 0 < result["title_accuracy"] <= 1


def test_a_folder_without_record_data_is_refused(tmp_path):
    done = run_cli(["eval", "records", "--data", str(tmp_path)], {})
    assert done.returncode == 2 and "neither City Scrapers" in done.stderr


def test_labels_without_their_pages_are_refused(tmp_path):
    (tmp_path / "labels.jsonl").write_text('{"fixture": "gone.html", "format": "html", "url": null, "page_role": null, '
                                           '"expected_count": null, "complete": false, "items": []}\n')
    done = run_cli(["eval", "records", "--data", str(tmp_path)], {})
    assert done.returncode == 2 and "HTML files are missing" in done.stderr


def test_train_records_writes_a_ranker_the_extractor_loads(data_dir, tmp_path):
    from models.records.ranker import ListRanker

    for category in ("1- Arts", "14- Society"):
        shutil.copytree(data_dir / "records" / "estuka" / category, tmp_path / "data" / category)
    done = run_cli(["train", "records", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "r.pt")], {})
    assert done.returncode == 0, done.stderr
    ranker = ListRanker.load(tmp_path / "r.pt")
    assert ranker.trained_on["pages"] == 60 and len(ranker.trained_on["folds"]) == 2


def test_source_pages_read_alone_say_why_they_show_no_list_and_which_a_feed_holds(data_dir):
    pages = cli_json(["eval", "records", "--data", str(data_dir / "sites")], {})["source_pages"]
    assert pages["pages"] > 50  # the labelled source pages whose file the snapshots hold
    assert sum(pages["without_a_list"].values()) == len(pages["by_page"])
    # synergie-asso's events are drawn by a script; its section's feed, in the snapshot, holds them.
    synergie = pages["by_page"]["synergie-asso/events/index.html"]
    assert synergie["no_list"] == "menu_only" and synergie["records_from_feed"] == 2
    # sand-point-hoa's calendar is a Google Calendar: its feed is named, not in the snapshot.
    calendar = pages["by_page"]["sand-point-hoa/calendar/index.html"]
    assert calendar["no_list"] == "in_a_frame" and calendar["feeds"][0].startswith("https://calendar.google.com/")
    feeds = pages["list_in_a_feed"]
    assert feeds["feed_named"] >= feeds["feed_in_snapshot"] >= feeds["read_from_feed"] >= 1
