"""The pagination commands as a user runs them: tag, train, eval (held out, with the AutoPager baseline)."""

import os

import pytest

from tests.conftest import TRAINING, cli_json, run_cli

pytestmark = pytest.mark.data


def test_tag_a_saved_listing_page_with_the_shipped_model(data_dir):
    page = data_dir / "sites" / "flink-apache-org" / "site" / "posts" / "page" / "3" / "index.html"
    tags = cli_json(["tag", str(page)], dict(os.environ))
    by_label = {link["label"]: link for link in tags["links"]}
    # Resolved against the page's canonical link.
    assert by_label["NEXT"]["url"] == "https://flink.apache.org/posts/page/4/"
    assert "https://flink.apache.org/posts/page/24/" in {link["url"] for link in tags["links"]}
    assert tags["model"] == "default v2" and tags["nodes"] > 100


def test_tag_refuses_what_is_not_a_page(tmp_path):
    binary = tmp_path / "image.html"
    binary.write_bytes(bytes(range(256)) * 20)
    result = run_cli(["tag", str(binary)], dict(os.environ))
    assert result.returncode == 2 and "not a text page" in result.stderr
    missing = run_cli(["tag", str(tmp_path / "nothing.html")], dict(os.environ))
    assert missing.returncode == 2 and "no such file" in missing.stderr


@TRAINING
def test_train_then_evaluate_held_out_against_autopager_trained_on_the_same_pages(data_dir, tmp_path):
    prnsm = str(data_dir / "pagination" / "prnsm")
    model = tmp_path / "small.pt"
    trained = run_cli(["train", "pagination", "--data", prnsm, "--language", "es", "--epochs", "3",
                       "--out", str(model)], dict(os.environ))
    assert trained.returncode == 0, trained.stderr[-2000:]
    result = cli_json(["eval", "pagination", "--data", prnsm, "--language", "de", "nl", "--model", str(model),
                       "--baseline", "autopager"], dict(os.environ))
    assert result["protocol"].endswith("(held out from the model's training data)")
    assert result["pages"] == 26
    for figures in (result, result["baseline"]):
        assert set(figures["micro"]) == {"PAGE", "NEXT", "avg_f1"} and set(figures["micro"]["PAGE"]) == {"p", "r", "f1"}
        assert set(figures["by_language"]) == {"de", "nl"}
        assert 0 <= figures["macro"]["avg_f1"] <= 1
    assert result["baseline"]["name"] == "autopager"


def test_a_model_of_another_format_is_refused_by_name(tmp_path):
    stale = tmp_path / "stale.pt"
    import torch

    torch.save({"format_version": 1, "config": {}}, stale)
    result = run_cli(["tag", "--model", str(stale), __file__], dict(os.environ))
    assert result.returncode == 2 and "format 1; this code reads 2" in result.stderr


def test_eval_continuation_reports_where_the_load_more_rule_leads(data_dir):
    prnsm = str(data_dir / "pagination" / "prnsm")
    result = cli_json(["eval", "pagination", "--data", prnsm, "--language", "nl", "--continuation"], dict(os.environ))
    assert result["pages"] == 9 and result["paginated"] <= result["pages"]
    # debijenkorf's "Toon volgende artikelen" (?page=2): a load-more link the labels leave unmarked
    assert any(wrong["link"].endswith("/herenmode/jassen?page=2") for wrong in result["wrong"])
    assert result["picks"] == (result["picks_next"] + result["picks_page"] + result["picks_other"]
                               + result["picks_unpaginated"])
