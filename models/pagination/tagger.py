"""PRNSM pagination tagger (Wu & Chang): node features → BiLSTM over the page's node sequence → CRF
(torchcrf's, for training; decoded by models.pagination.viterbi).

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

import lxml.html
import numpy as np
import torch
from torch import nn
from torchcrf import CRF

from models.model_files import load_checked
from models.pagination.data import LABELS, LabelledPage, clickable_nodes
from models.pagination.features import FEATURE_GROUPS, HEURISTICS, Hashes, NodeFeatures, page_features
from models.pagination.viterbi import best_paths
from models.text_encoders import get_encoder
from models.web.dom import parse_html

FORMAT_VERSION = 2
# The most clickable nodes tagged on one page (see tagged_nodes).
MAX_TAGGED_NODES = 4000
TOP_PARENT_TAGS = 30
PREDICT_BATCH = 16
EPOCHS = 12
NGRAM_INIT_SEED = 20161

PageFeatures = list[NodeFeatures]


def features_of(html: str, url: str = "") -> PageFeatures:
    """The features of every clickable node of a page fetched from url; none for a page that does not parse."""
    root = parse_html(html)
    return page_features(root, url) if root is not None else []


def _bag(rows: Sequence[Hashes], buckets: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows' n-gram hashes folded into the buckets, flat, and where each row starts (EmbeddingBag's input)."""
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    flat = np.frombuffer(b"".join(rows), dtype=np.uint32).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(rows) else np.zeros(0, dtype=np.int64)
    return torch.from_numpy(flat % buckets), torch.from_numpy(offsets.astype(np.int64))


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
        # What the model was trained on, as its file records it (set by load).
        self.trained_on: dict = {}
        self.groups = [group for group in FEATURE_GROUPS if group not in ablate]
        self.encoder = get_encoder(encoder) if encoder and "text" in self.groups else None
        self.parent_index = {tag: i + 1 for i, tag in enumerate(parent_tags)}  # 0: any other tag
        self.parent = nn.Embedding(len(parent_tags) + 1, parent_dim)
        # Sparse gradients: a batch touches a few hundred of the buckets, and dense Adam over
        # every bucket dominated training time.
        self.classes = nn.EmbeddingBag(buckets, ngram_dim, mode="mean", sparse=True)
        self.query = nn.EmbeddingBag(buckets, ngram_dim, mode="mean", sparse=True)
        self.text = nn.EmbeddingBag(buckets, text_dim, mode="mean", sparse=True)
        with torch.no_grad():
            for table, initial in zip(self.ngram_tables(), self._seeded_ngram_tables().values()):
                table.weight.copy_(initial)
        if self.encoder is not None:
            self.sentence = nn.Linear(self.encoder.dim, text_dim)
        widths = {"parent": parent_dim, "classes": ngram_dim, "query": ngram_dim,
                  "text": text_dim * (2 if self.encoder is not None else 1), "heuristics": HEURISTICS}
        self.dense = nn.Sequential(nn.Linear(sum(widths[group] for group in self.groups), dense), nn.ReLU(),
                                   nn.Dropout(0.2))
        self.lstm = nn.LSTM(dense, hidden, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(2 * hidden, len(LABELS))
        self.crf = CRF(len(LABELS), batch_first=True)

    def ngram_tables(self) -> tuple[nn.EmbeddingBag, ...]:
        return self.classes, self.query, self.text

    def _seeded_ngram_tables(self) -> dict[str, torch.Tensor]:
        """The n-gram tables' initial values, drawn from a fixed seed (N(0, 1), PyTorch's default): training
        changes only the rows of n-grams it saw, so a saved model needs only those rows.
        (Zero-initialised tables, which would need no seed, measured worse: 0.843 against 0.882 macro F1.)"""
        generator = torch.Generator().manual_seed(NGRAM_INIT_SEED)
        return {f"{name}.weight": torch.randn(table.weight.shape, generator=generator)
                for name, table in zip(("classes", "query", "text"), self.ngram_tables())}

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
            parts.append(torch.from_numpy(np.array([n.heuristics for n in nodes], dtype=np.float32)))
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
                paths = best_paths(emissions, mask, self.crf.start_transitions, self.crf.transitions,
                                   self.crf.end_transitions)
                for i, path in zip(chunk, paths):
                    results[i] = [LABELS[tag] for tag in path]
        return results

    def predict(self, htmls: Sequence[str], urls: Sequence[str] | None = None) -> list[list[str]]:
        """The label of every clickable node of each page (an empty list for a page without any)."""
        urls = urls or [""] * len(htmls)
        return self.predict_features([features_of(html, url) for html, url in zip(htmls, urls, strict=True)])

    def label_nodes(self, roots: Sequence[lxml.html.HtmlElement | None],
                    urls: Sequence[str]) -> list[list[tuple[lxml.html.HtmlElement, str]]]:
        """Each parsed page's clickable nodes with their labels (pages that did not parse: none); on a page
        with more than MAX_TAGGED_NODES, its first and last half of that many (see tagged_nodes)."""
        nodes = [tagged_nodes(root) if root is not None else [] for root in roots]
        features = [page_features(root, url, page_nodes) if root is not None else []
                    for root, url, page_nodes in zip(roots, urls, nodes)]
        return [list(zip(page_nodes, labels)) for page_nodes, labels in zip(nodes, self.predict_features(features))]

    def save(self, path: Path, trained_on: dict | None = None) -> None:
        """Write the whole recipe; trained_on ({data: [dirs], languages, pages}) lets a held-out evaluation
        train its baseline on the same data."""
        state = self.state_dict()
        initial = self._seeded_ngram_tables()
        # Only the n-gram rows that training changed (in half precision); the rest are their seeded start.
        rows = {}
        for name, start in initial.items():
            table = state.pop(name)
            changed = (table != start).any(dim=1).nonzero().squeeze(1)
            rows[name] = {"index": changed, "values": table[changed].half()}
        torch.save({"format_version": FORMAT_VERSION, "config": self.config, "labels": list(LABELS),
                    "trained_on": trained_on or {}, "state_dict": state, "ngram_rows": rows}, path)

    @classmethod
    def load(cls, path: Path) -> PaginationTagger:
        saved = _read(path)
        model = cls(**saved["config"])
        state = dict(saved["state_dict"])
        for name, changed in saved["ngram_rows"].items():
            table = model.state_dict()[name].clone()
            table[changed["index"]] = changed["values"].float()
            state[name] = table
        model.load_state_dict(state)
        model.trained_on = dict(saved.get("trained_on") or {})
        return model


def tagged_nodes(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The clickable nodes the tagger reads: all of them, or on a page with more than MAX_TAGGED_NODES (an
    archive of tens of thousands of links, which would take the tagger seconds) the first and last half of
    that many — where a list's pager is. The labelled pages have at most 2,389."""
    nodes = clickable_nodes(root)
    if len(nodes) <= MAX_TAGGED_NODES:
        return nodes
    half = MAX_TAGGED_NODES // 2
    return nodes[:half] + nodes[-half:]


def _read(path: Path) -> dict:
    return load_checked(path, "pagination model", FORMAT_VERSION)


Example = tuple[PageFeatures, list[str]]


def examples_of(pages: Sequence[LabelledPage]) -> list[Example]:
    """(features, gold labels) of the pages whose nodes match their labels (pages without nodes say nothing)."""
    examples = []
    for page in pages:
        features = features_of(page.html, page.url)
        if features and len(features) == len(page.labels):
            examples.append((features, list(page.labels)))
    return examples


def train(pages: Sequence[LabelledPage] | Sequence[Example], epochs: int = EPOCHS, batch_size: int = 8,
          lr: float = 2e-3, seed: int = 13, progress: Callable[[int, int, float], None] | None = None,
          **hyper) -> PaginationTagger:
    """Train on labelled pages, or on their precomputed examples (negative log-likelihood of the CRF).

    `hyper` goes to PaginationTagger (buckets, encoder, ablate, …)."""
    random.seed(seed)
    torch.manual_seed(seed)
    examples = examples_of(pages) if pages and isinstance(pages[0], LabelledPage) else list(pages)
    parents = Counter(node.parent_tag for features, _ in examples for node in features)
    model = PaginationTagger([tag for tag, _ in parents.most_common(TOP_PARENT_TAGS)], **hyper)
    sparse = [p for table in model.ngram_tables() for p in table.parameters()]
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


# Trained on all of <data>/pagination by `make pagination-model`; its card is PAGINATION_MODEL.md.
DEFAULT_MODEL = Path(__file__).with_name("pagination_default.pt")


def load_tagger(path: Path | None = None) -> PaginationTagger:
    """The model at path, or the default model shipped in the package."""
    path = Path(path) if path else DEFAULT_MODEL
    if not path.is_file():
        raise FileNotFoundError(f"no pagination model at {path}"
                                + (" (the package ships without its default model: run `make pagination-model`)"
                                   if path == DEFAULT_MODEL else ""))
    return PaginationTagger.load(path)


def training_data(model: PaginationTagger) -> dict:
    """What a loaded model was trained on: {data: [dirs], languages: [...], pages: n} (empty when not
    recorded). The shipped model records data folders relative to the data root (settings.data)."""
    from infra.settings import get_settings

    trained_on = dict(model.trained_on)
    trained_on["data"] = [str(get_settings().data / folder) for folder in trained_on.get("data", [])]
    return trained_on


def model_name(path: Path | None = None) -> str:
    """How tags name the model that made them: its file name and format version."""
    return f"{Path(path).name if path else 'default'} v{FORMAT_VERSION}"
