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
    assert result["data"] == "estuka" and result["pages"] == 60
    assert "2 folds" in result["protocol"]["sourcewatch"]
    for figures in (result, result["largest_region"], result["baseline"]):
        assert 0 <= figures["precision"] <= 1 and 0 <= figures["recall"] <= 1 and 0 <= figures["f1"] <= 1
        assert figures["count_accuracy"] is None and figures["records_per_page"] > 0
        assert set(figures["by_category"]) == categories
    assert result["f1"] > result["baseline"]["f1"]


def test_cross_validation_needs_two_categories(data_dir, tmp_path):
    shutil.copytree(data_dir / "records" / "estuka" / "1- Arts", tmp_path / "1- Arts")
    done = run_cli(["eval", "records", "--data", str(tmp_path)], {})
    assert done.returncode == 2 and "two categories" in done.stderr


def test_city_scrapers_figures_with_listing_and_detail_pages_apart(data_dir, tmp_path):
    source = (data_dir / "records" / "city-scrapers").resolve()
    (tmp_path / "labels.jsonl").write_text("".join((source / "labels.jsonl").read_text().splitlines(True)[:60]))
    (tmp_path / "fixtures").symlink_to(source / "fixtures")
    result = cli_json(["eval", "records", "--data", str(tmp_path)], {})
    assert result["data"] == "city-scrapers"
    assert result["pages"] > 0 and result["items"] > 0 and 0 <= result["recall"] <= 1
    assert "detail_or_auxiliary" in result and "recall" in result["baseline"]
    assert result["f1_is_recall"] == (result["precision"] is None)


def test_snapshot_listings_are_read_whole_with_their_pagination(data_dir):
    result = cli_json(["eval", "records", "--data", str(data_dir / "sites")], {})
    flink = result["by_listing"]["flink-apache-org/posts"]
    assert flink["pages"] == 24 and flink["items"] == 237
    assert flink["item_link_recall"] == 1.0 and flink["records"] == 237  # every post once, nothing else
    assert result["item_recall"] >= result["item_link_recall"]


def test_a_folder_without_record_data_is_refused(tmp_path):
    done = run_cli(["eval", "records", "--data", str(tmp_path)], {})
    assert done.returncode == 2 and "neither City Scrapers" in done.stderr


def test_labels_without_their_pages_are_refused(tmp_path):
    (tmp_path / "labels.jsonl").write_text('{"fixture": "gone.html", "format": "html", "url": null, "page_role": null, '
                                           '"expected_count": null, "complete": false, "items": []}\n')
    done = run_cli(["eval", "records", "--data", str(tmp_path)], {})
    assert done.returncode == 2 and "HTML files are missing" in done.stderr
