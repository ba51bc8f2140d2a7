"""`sourcewatch fuzz pages` on real pages mutated the hostile ways (a short run; the long one is the command's
default, figures in the README): no stage raises on any document, and a document is the same when replayed
alone."""

from __future__ import annotations

import pytest

from jobs.fuzz_pages import MUTATIONS, documents
from models.records.no_list import DESCRIPTIONS as NO_LIST_DESCRIPTIONS
from tests.conftest import cli_json, run_cli

pytestmark = pytest.mark.data
SEED, DOCUMENTS = 11, 80


def test_fuzzed_pages_raise_in_no_stage(data_dir):
    env = {"PATH": "/usr/bin:/bin", "SOURCEWATCH_DATA": str(data_dir)}
    # Time is not judged here (a loaded machine is slow); the budget is the README's figure.
    result = cli_json(["fuzz", "pages", "--documents", str(DOCUMENTS), "--seed", str(SEED), "--budget-ms", "1e9",
                       "--json"], env, timeout=600)
    assert result["documents"] == DOCUMENTS and sum(result["by_mutation"].values()) == DOCUMENTS
    assert len(result["by_mutation"]) >= len(MUTATIONS) - 2
    assert result["failures"] == [], result["failures"]
    # A hostile page gives records or says why it gives no list (deep nesting, no text, no repeats…).
    assert result["no_list"] and set(result["no_list"]) <= set(NO_LIST_DESCRIPTIONS), result["no_list"]
    assert set(result["slowest_ms"]) == {"decoding", "links", "pagination", "records", "item time",
                                         "classifier texts"}
    missing = run_cli(["fuzz", "pages", "--corpus", str(data_dir / "no-such-folder")], env)
    assert missing.returncode == 2 and "no corpus at" in missing.stderr


def test_a_document_is_the_same_when_replayed_alone():
    corpus = [b"<html><body><ul><li><a href='/a'>a</a></li><li><a href='/b'>b</a></li></ul></body></html>"]
    run = list(documents(corpus, SEED, 0, 30))
    assert [doc for doc in documents(corpus, SEED, 17, 1)] == [run[17]]
    assert len({kind for _, kind, _ in run}) > 5
