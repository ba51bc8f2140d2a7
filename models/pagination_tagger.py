"""PRNSM pagination tagger (Wu & Chang): node features → BiLSTM over the page's node sequence → CRF.

Labels PAGE / NEXT / OTHER for every clickable node of a page. The model file
holds the weights, every constructor hyper-parameter, the label and
parent-tag vocabularies and the format version, and loads with
`torch.load(weights_only=True)`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from torchcrf import CRF

from models.dom import parse_html
from models.pagination_data import LABELS, LabelledPage
from models.pagination_features import HEURISTICS, NodeFeatures, page_features

FORMAT_VERSION = 1
TOP_PARENT_TAGS = 30


class ModelVersionError(RuntimeError):
    """A model file written by another version of this code."""


def _bag(rows: Sequence[tuple[int, ...]], buckets: int) -> tuple[torch.Tensor, torch.Tensor]:
    offsets, flat = [], []
    for row in rows:
        offsets.append(len(flat))
        flat.extend(row)
    return torch.tensor(flat, dtype=torch.long) % buckets, torch.tensor(offsets, dtype=torch.long)


class PaginationTagger(nn.Module):
    def __init__(self, parent_tags: Sequence[str], hidden: int = 64, text_dim: int = 64, ngram_dim: int = 32,
                 parent_dim: int = 16, dense: int = 128, buckets: int = 50_000) -> None:
        super().__init__()
        self.config = {"parent_tags": list(parent_tags), "hidden": hidden, "text_dim": text_dim,
                       "ngram_dim": ngram_dim, "parent_dim": parent_dim, "dense": dense, "buckets": buckets}
        self.buckets = buckets
        self.parent_index = {tag: i + 1 for i, tag in enumerate(parent_tags)}  # 0: any other tag
        self.parent = nn.Embedding(len(parent_tags) + 1, parent_dim)
        self.classes = nn.EmbeddingBag(buckets, ngram_dim, mode="mean")
        self.query = nn.EmbeddingBag(buckets, ngram_dim, mode="mean")
        self.text = nn.EmbeddingBag(buckets, text_dim, mode="mean")
        width = parent_dim + 2 * ngram_dim + text_dim + HEURISTICS
        self.dense = nn.Sequential(nn.Linear(width, dense), nn.ReLU(), nn.Dropout(0.2))
        self.lstm = nn.LSTM(dense, hidden, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(2 * hidden, len(LABELS))
        self.crf = CRF(len(LABELS), batch_first=True)

    def _node_vectors(self, nodes: Sequence[NodeFeatures]) -> torch.Tensor:
        parents = torch.tensor([self.parent_index.get(n.parent_tag, 0) for n in nodes], dtype=torch.long)
        parts = [self.parent(parents)]
        for bag, field in ((self.classes, "class_ngrams"), (self.query, "query_ngrams"), (self.text, "text_ngrams")):
            flat, offsets = _bag([getattr(n, field) for n in nodes], self.buckets)
            parts.append(bag(flat, offsets))
        parts.append(torch.tensor([n.heuristics for n in nodes], dtype=torch.float32))
        return self.dense(torch.cat(parts, dim=1))

    def _emissions(self, pages: Sequence[Sequence[NodeFeatures]]) -> tuple[torch.Tensor, torch.Tensor]:
        vectors = self._node_vectors([node for page in pages for node in page])
        longest = max(len(page) for page in pages)
        batch = torch.zeros(len(pages), longest, vectors.shape[1])
        mask = torch.zeros(len(pages), longest, dtype=torch.bool)
        start = 0
        for row, page in enumerate(pages):
            batch[row, :len(page)] = vectors[start:start + len(page)]
            mask[row, :len(page)] = True
            start += len(page)
        hidden, _ = self.lstm(batch)
        return self.emit(hidden), mask

    def loss(self, pages: Sequence[Sequence[NodeFeatures]], labels: Sequence[Sequence[str]]) -> torch.Tensor:
        emissions, mask = self._emissions(pages)
        tags = torch.zeros(mask.shape, dtype=torch.long)
        for row, page_labels in enumerate(labels):
            tags[row, :len(page_labels)] = torch.tensor([LABELS.index(label) for label in page_labels])
        return -self.crf(emissions, tags, mask=mask, reduction="mean")

    def predict(self, htmls: Sequence[str]) -> list[list[str]]:
        """The label of every clickable node of each page (an empty list for a page without any)."""
        features = [page_features(root) if (root := parse_html(html)) is not None else [] for html in htmls]
        results: list[list[str]] = [[] for _ in htmls]
        tagged = [i for i, page in enumerate(features) if page]
        self.eval()
        with torch.inference_mode():
            for start in range(0, len(tagged), 16):
                chunk = tagged[start:start + 16]
                emissions, mask = self._emissions([features[i] for i in chunk])
                for i, path in zip(chunk, self.crf.decode(emissions, mask=mask)):
                    results[i] = [LABELS[tag] for tag in path]
        return results

    def save(self, path: Path) -> None:
        torch.save({"format_version": FORMAT_VERSION, "config": self.config, "labels": list(LABELS),
                    "state_dict": self.state_dict()}, path)

    @classmethod
    def load(cls, path: Path) -> PaginationTagger:
        saved = torch.load(path, weights_only=True)
        version = saved.get("format_version")
        if version != FORMAT_VERSION:
            raise ModelVersionError(f"{path} is pagination model format {version}; this code reads {FORMAT_VERSION}")
        model = cls(**saved["config"])
        model.load_state_dict(saved["state_dict"])
        return model


def train(pages: Sequence[LabelledPage], epochs: int = 12, batch_size: int = 8, lr: float = 2e-3,
          seed: int = 13, buckets: int = 50_000, progress=None) -> PaginationTagger:
    """Train on labelled pages (negative log-likelihood of the CRF)."""
    random.seed(seed)
    torch.manual_seed(seed)
    examples = []
    for page in pages:
        root = parse_html(page.html)
        features = page_features(root) if root is not None else []
        if features and len(features) == len(page.labels):
            examples.append((features, list(page.labels)))
    parents = Counter(node.parent_tag for features, _ in examples for node in features)
    model = PaginationTagger([tag for tag, _ in parents.most_common(TOP_PARENT_TAGS)], buckets=buckets)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        model.train()
        random.shuffle(examples)
        for start in range(0, len(examples), batch_size):
            batch = examples[start:start + batch_size]
            optimiser.zero_grad()
            loss = model.loss([f for f, _ in batch], [labels for _, labels in batch])
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimiser.step()
        if progress is not None:
            progress(epoch + 1, epochs, loss.item())
    return model
