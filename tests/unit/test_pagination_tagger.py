"""The shared model test: train → save → load → predict on tiny data; plus bad input and version checks."""

import zlib

import pytest
import torch

from models.model_files import ModelVersionError
from models.pagination.data import LabelledPage
from models.pagination.evaluation import tagging_throughput
from models.pagination.features import hashed_ngrams, page_features
from models.pagination.tagger import PaginationTagger, features_of, train
from models.text_encoders import CachedEncoder
from models.web.dom import parse_html


def _page(n: int, pages: int) -> LabelledPage:
    links = "".join(f'<a href="/list?page={i}">{i}</a>' for i in range(1, pages + 1))
    html = ('<html><body><nav><a href="/">Home</a><a href="/about">About</a></nav><ul>'
            + "".join(f'<li><a href="/item/{n}-{i}">Item {i}</a></li>' for i in range(4))
            + f'</ul><div class="pagination">{links}<a class="next" href="/list?page=2">Next »</a></div></body></html>')
    labels = ["OTHER"] * 6 + ["PAGE"] * pages + ["NEXT"]
    return LabelledPage(str(n), f"https://site{n}.example/list", "en", html, tuple(labels))


@pytest.fixture(scope="module")
def trained():
    torch.manual_seed(0)
    return train([_page(n, 2 + n % 4) for n in range(24)], epochs=25, batch_size=4, lr=5e-3, buckets=2048)


def test_features_cover_every_clickable_node():
    page = _page(1, 3)
    features = page_features(parse_html(page.html))
    assert len(features) == len(page.labels)
    next_node = features[-1]
    assert next_node.heuristics[1] == 1.0 and next_node.heuristics[2] == 1.0  # 'page' and digits in href
    assert next_node.parent_tag == "div" and next_node.class_ngrams and next_node.query_ngrams


def test_ngram_hashes_are_each_token_s_crc32s_four_bytes_each():
    # Each token padded <…>, its 2-, 3- and 4-grams hashed; the rows are kept compact (the caches hold many).
    expected = [zlib.crc32(f"<{token}>"[start:start + size].encode()) for token in ("next", "página")
                for size in (2, 3, 4) for start in range(len(token) + 3 - size)]
    hashes = hashed_ngrams(["next", "página"])
    assert list(hashes) == expected and hashes.itemsize == 4
    assert len(hashed_ngrams(["word"] * 20)) == 64  # at most MAX_NGRAMS


def test_hrefs_urllib_refuses_have_features_too():
    # A broken IPv6 host and a bracketed name: urlsplit raises on both; the node is still a node.
    html = ('<html><body><a href="http://[::1/x">a</a><a href="http://[&_span]/y">b</a>'
            '<a href="/list?page=2">2</a></body></html>')
    assert len(page_features(parse_html(html), "https://site.example/list")) == 3


def test_train_save_load_predict(trained, tmp_path):
    unseen = _page(99, 3)
    before = trained.predict([unseen.html])
    assert before == [list(unseen.labels)]
    path = tmp_path / "pagination.pt"
    trained.save(path)
    loaded = PaginationTagger.load(path)
    assert loaded.predict([unseen.html]) == before
    assert loaded.config == trained.config


def test_pages_without_nodes_or_text_give_no_pagination(trained):
    assert trained.predict(["", "<html><body><p>no links</p></body></html>", "\x00\x01 not html"]) == [[], [], []]


def test_a_model_of_another_format_version_is_refused(trained, tmp_path):
    path = tmp_path / "old.pt"
    trained.save(path)
    saved = torch.load(path, weights_only=True)
    saved["format_version"] = 0
    torch.save(saved, path)
    with pytest.raises(ModelVersionError, match="format 0; this code reads 2"):
        PaginationTagger.load(path)


def test_huge_and_broken_pages_get_one_label_per_node(trained):
    huge = "<html><body>" + "".join(f'<a href="/item/{i}">Item {i}</a>' for i in range(5000)) + "</body></html>"
    broken = '<div><a href="/x?page=2">2</a><button class="next">Next<a href="/x?page=3">3</div></span><p><b>'
    labels = trained.predict([huge, broken], ["https://site.example/list", ""])
    assert len(labels[0]) == 5000 and set(labels[0]) <= {"OTHER", "PAGE", "NEXT"}
    assert len(labels[1]) == 3


def test_the_benchmarks_cold_pass_embeds_every_node_text_again(trained):
    pages = [_page(n, 3) for n in range(3)]
    embedded: list[str] = []
    shared = trained.encoder

    class Counting:
        name, dim = shared.name, shared.dim

        def encode(self, texts):
            embedded.extend(texts)
            return shared.encode(texts)

    trained.encoder = CachedEncoder(Counting())
    try:
        result = tagging_throughput(trained, pages, runs=1)
    finally:
        trained.encoder = shared
    texts = {node.text for page in pages for node in features_of(page.html, page.url)}
    # Once in the untimed first pass, once in the cold pass (its cache emptied); the warm passes embed none.
    assert sorted(embedded) == sorted([*texts, *texts])
    assert result["pages"] == 3 and {"pages_per_s", "pages_per_s_cold_features", "pages_per_s_cold"} <= set(result)
