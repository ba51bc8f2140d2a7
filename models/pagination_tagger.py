"""PRNSM pagination tagger (Wu & Chang): node features → BiLSTM over the page's node sequence → CRF.

Labels PAGE / NEXT / OTHER for every clickable node of a page. The model file
holds the weights, every constructor hyper-parameter (the text encoder's name
and the ablated feature groups among them), the label and parent-tag
vocabularies and the format version, and loads with
`torch.load(weights_only=True)`. The pretrained text encoder is not in the
file: it ships in its own package and is rebuilt by name.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from torch import nn
from torchcrf import CRF

from models.dom import parse_html
from models.pagination_data import LABELS, LabelledPage
from models.pagination_features import HEURISTICS, NodeFeatures, page_features
from models.text_encoders import get_encoder

FORMAT_VERSION = 2
TOP_PARENT_TAGS = 30
# Feature groups that an ablation can leave out (the paper's Table: w/o parent, text, query, class, heuristics).
FEATURE_GROUPS = ("parent", "classes", "query", "text", "heuristics")
PREDICT_BATCH = 16

PageFeatures = list[NodeFeatures]


class ModelVersionError(RuntimeError):
    """A model file written by another version of this code."""


def features_of(html: str) -> PageFeatures:
    """The features of every clickable node of a page; none for a page that does not parse."""
    root = parse_html(html)
    return page_features(root) if root is not None else []


def _bag(rows: Sequence[tuple[int, ...]], buckets: int) -> tuple[torch.Tensor, torch.Tensor]:
    offsets, flat = [], []
    for row in rows:
        offsets.append(len(flat))
        flat.extend(row)
    return torch.tensor(flat, dtype=torch.long) % buckets, torch.tensor(offsets, dtype=torch.long)


class PaginationTagger(nn.Module):
    def __init__(self, parent_tags: Sequence[str], hidden: int = 64, text_dim: int = 64, ngram_dim: int = 32,
                 parent_dim: int = 16, dense: int = 128, buckets: int = 50_000, encoder: str | None = "use",
                 ablate: Sequence[str] = ()) -> None:
        super().__init__()
        unknown = set(ablate) - set(FEATURE_GROUPS)
        if unknown:
            raise ValueError(f"unknown feature groups {sorted(unknown)}; known: {', '.join(FEATURE_GROUPS)}")
        self.config = {"parent_tags": list(parent_tags), "hidden": hidden, "text_dim": text_dim,
                       "ngram_dim": ngram_dim, "parent_dim": parent_dim, "dense": dense, "buckets": buckets,
                       "encoder": encoder, "ablate": list(ablate)}
        self.buckets = buckets
        self.groups = [group for group in FEATURE_GROUPS if group not in ablate]
        self.encoder = get_encoder(encoder) if encoder and "text" in self.groups else None
        self.parent_index = {tag: i + 1 for i, tag in enumerate(parent_tags)}  # 0: any other tag
        self.parent = nn.Embedding(len(parent_tags) + 1, parent_dim)
        # Sparse gradients: a batch touches a few hundred of the buckets, and dense Adam over
        # every bucket dominated training time.
        self.classes = nn.EmbeddingBag(buckets, ngram_dim, mode="mean", sparse=True)
        self.query = nn.EmbeddingBag(buckets, ngram_dim, mode="mean", sparse=True)
        self.text = nn.EmbeddingBag(buckets, text_dim, mode="mean", sparse=True)
        if self.encoder is not None:
            self.sentence = nn.Linear(self.encoder.dim, text_dim)
        widths = {"parent": parent_dim, "classes": ngram_dim, "query": ngram_dim,
                  "text": text_dim * (2 if self.encoder is not None else 1), "heuristics": HEURISTICS}
        self.dense = nn.Sequential(nn.Linear(sum(widths[group] for group in self.groups), dense), nn.ReLU(),
                                   nn.Dropout(0.2))
        self.lstm = nn.LSTM(dense, hidden, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(2 * hidden, len(LABELS))
        self.crf = CRF(len(LABELS), batch_first=True)

    def _node_vectors(self, nodes: Sequence[NodeFeatures]) -> torch.Tensor:
        parts = []
        if "parent" in self.groups:
            parents = torch.tensor([self.parent_index.get(n.parent_tag, 0) for n in nodes], dtype=torch.long)
            parts.append(self.parent(parents))
        for group, bag, field in (("classes", self.classes, "class_ngrams"), ("query", self.query, "query_ngrams"),
                                  ("text", self.text, "text_ngrams")):
            if group in self.groups:
                flat, offsets = _bag([getattr(n, field) for n in nodes], self.buckets)
                parts.append(bag(flat, offsets))
        if self.encoder is not None:
            parts.append(torch.relu(self.sentence(torch.from_numpy(self.encoder.encode([n.text for n in nodes])))))
        if "heuristics" in self.groups:
            parts.append(torch.tensor([n.heuristics for n in nodes], dtype=torch.float32))
        return self.dense(torch.cat(parts, dim=1))

    def _emissions(self, pages: Sequence[PageFeatures]) -> tuple[torch.Tensor, torch.Tensor]:
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

    def loss(self, pages: Sequence[PageFeatures], labels: Sequence[Sequence[str]]) -> torch.Tensor:
        emissions, mask = self._emissions(pages)
        tags = torch.zeros(mask.shape, dtype=torch.long)
        for row, page_labels in enumerate(labels):
            tags[row, :len(page_labels)] = torch.tensor([LABELS.index(label) for label in page_labels])
        return -self.crf(emissions, tags, mask=mask, reduction="mean")

    def predict_features(self, pages: Sequence[PageFeatures]) -> list[list[str]]:
        """The label of every node of each page (an empty list for a page without nodes)."""
        results: list[list[str]] = [[] for _ in pages]
        # Pages of similar length share a batch, so little of the CRF's work is padding.
        tagged = sorted((i for i, page in enumerate(pages) if page), key=lambda i: len(pages[i]))
        self.eval()
        with torch.inference_mode():
            for start in range(0, len(tagged), PREDICT_BATCH):
                chunk = tagged[start:start + PREDICT_BATCH]
                emissions, mask = self._emissions([pages[i] for i in chunk])
                for i, path in zip(chunk, self.crf.decode(emissions, mask=mask)):
                    results[i] = [LABELS[tag] for tag in path]
        return results

    def predict(self, htmls: Sequence[str]) -> list[list[str]]:
        """The label of every clickable node of each page (an empty list for a page without any)."""
        return self.predict_features([features_of(html) for html in htmls])

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


Example = tuple[PageFeatures, list[str]]


def examples_of(pages: Sequence[LabelledPage]) -> list[Example]:
    """(features, gold labels) of the pages whose nodes match their labels (pages without nodes say nothing)."""
    examples = []
    for page in pages:
        features = features_of(page.html)
        if features and len(features) == len(page.labels):
            examples.append((features, list(page.labels)))
    return examples


def train(pages: Sequence[LabelledPage] | Sequence[Example], epochs: int = 12, batch_size: int = 8,
          lr: float = 2e-3, seed: int = 13, progress: Callable[[int, int, float], None] | None = None,
          **hyper) -> PaginationTagger:
    """Train on labelled pages, or on their precomputed examples (negative log-likelihood of the CRF).

    `hyper` goes to PaginationTagger (buckets, encoder, ablate, …)."""
    random.seed(seed)
    torch.manual_seed(seed)
    examples = examples_of(pages) if pages and isinstance(pages[0], LabelledPage) else list(pages)
    parents = Counter(node.parent_tag for features, _ in examples for node in features)
    model = PaginationTagger([tag for tag, _ in parents.most_common(TOP_PARENT_TAGS)], **hyper)
    sparse = [p for m in (model.classes, model.query, model.text) for p in m.parameters()]
    dense = [p for p in model.parameters() if all(p is not s for s in sparse)]
    optimisers = [torch.optim.SparseAdam(sparse, lr=lr), torch.optim.Adam(dense, lr=lr)]
    for epoch in range(epochs):
        model.train()
        # Batches of pages of similar length (less CRF padding), visited in random order.
        order = sorted(random.sample(examples, len(examples)), key=lambda example: len(example[0]))
        batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
        random.shuffle(batches)
        total = 0.0
        for batch in batches:
            for optimiser in optimisers:
                optimiser.zero_grad()
            loss = model.loss([f for f, _ in batch], [labels for _, labels in batch])
            loss.backward()
            nn.utils.clip_grad_norm_(dense, 5.0)
            for optimiser in optimisers:
                optimiser.step()
            total += loss.item()
        if progress is not None:
            progress(epoch + 1, epochs, total / max(len(batches), 1))
    return model
