"""The source-page classifier: is this page a site's event/news listing page?

As in the seed paper, four texts stand for a page — its largest and second-largest data regions (from the
record extractor's MDR regions), its title, and the text of the middle 50 % of its elements — each encoded
by a pretrained multilingual sentence encoder; the four vectors are concatenated → a classifier (ours: a
logistic regression, where the paper's MLP overfitted our few source pages) → P(source page). Our
addition: a fifth text, the words of the page's URL path (/events/, /aktuelles/ say what most listing pages
say of themselves; site-grouped CV: F1 0.39 → 0.76 on <data>/sites). The paper's ablation reads the whole
page text as one text instead. Training data: the labelled sites' pages
(source pages positive, the sites' other pages negative), compared by site-grouped cross-validation.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from infra.settings import Settings
from models.discovery.agent import path_words
from models.discovery.data import load_sites
from models.model_files import load_checked
from models.records.main_list import extract_records
from models.text_encoders import TextEncoder, get_encoder
from models.web.dom import normalize_space, parse_html, text_content

TEXT_CHARS = 1000
NEGATIVES_PER_SITE = 25
# Pages whose site name starts so are training data in every fold, never test data.
TRAIN_ONLY = "train-only:"
# Inverse regularisation strengths tried, and the one used where the training pages' sites are too few to
# choose (the middle of the range where site-grouped CV F1 on <data>/sites is flat, 0.003–0.1: README).
REGULARISATION_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3)
DEFAULT_C = 0.01
INNER_FOLDS = 4
MAX_ITERATIONS = 3000
# The paper's MLP, kept as fine-tuning's reward.
HIDDEN = 256
MLP_EPOCHS = 60
FORMAT_VERSION = 3
# What stands for a page: the four texts and its URL path's words (the default), the paper's four texts, or the
# paper's ablation, the whole page text.
PAGE_INPUTS = ("four_texts_and_path", "four_texts", "whole_page")
DEFAULT_INPUT = PAGE_INPUTS[0]
DEFAULT_CLASSIFIER = Path(__file__).with_name("classifier_default.pt")


@dataclass(frozen=True)
class LabelledPage:
    site: str
    path: str
    html: str
    source: bool


def four_texts(html: str, url: str) -> tuple[str, str, str, str]:
    """Largest data region, second data region, title, middle 50 % of the elements' own text."""
    regions = extract_records(parse_html(html), url).region_texts
    root = parse_html(html)  # again: the extraction spaces out the block elements of the tree it reads
    if root is None:
        return regions[0][:TEXT_CHARS], regions[1][:TEXT_CHARS], "", ""
    title = normalize_space(root.findtext(".//title") or "")
    elements = [element for element in root.iter() if isinstance(element.tag, str)
                and element.tag not in ("script", "style", "head", "title", "meta", "link")]
    middle = elements[len(elements) // 4: 3 * len(elements) // 4]
    text = normalize_space(" ".join(element.text or "" for element in middle))
    return regions[0][:TEXT_CHARS], regions[1][:TEXT_CHARS], title[:TEXT_CHARS], text[:TEXT_CHARS]


def whole_text(html: str) -> str:
    root = parse_html(html)
    return normalize_space(text_content(root))[:4 * TEXT_CHARS] if root is not None else ""


def labelled_pages(paths: Sequence[Path], seed: int = 0) -> list[LabelledPage]:
    """Every source page of the labelled sites and up to NEGATIVES_PER_SITE other pages of each (a seeded
    sample), read from disk."""
    rng = random.Random(seed)
    pages = []
    for site in load_sites(list(paths)):
        files = sorted(site.folder.root.rglob("*.htm*"))
        served = [(site.folder.prefix + str(file.relative_to(site.folder.root)), file) for file in files]
        positives = [(path, file) for path, file in served if site.is_source(path)]
        negatives = [(path, file) for path, file in served if not site.is_source(path)]
        for path, file in positives + rng.sample(negatives, min(len(negatives), NEGATIVES_PER_SITE)):
            html = file.read_text(encoding="utf-8", errors="replace")
            pages.append(LabelledPage(site.name, path, html, site.is_source(path)))
    return pages


def listing_pages(directory: Path) -> list[LabelledPage]:
    """City Scrapers' event/meeting listing pages (<data>/records/city-scrapers) as extra source pages, for
    training only: they come without their sites' other pages, so they are never test pages."""
    from models.records.data import load_city_scrapers

    return [LabelledPage(f"{TRAIN_ONLY}{page.host}", "/" + page.fixture, page.html, True)
            for page in load_city_scrapers(directory) if page.role == "listing"]


def html_vectors(documents: Sequence[tuple[str, str]], encoder: TextEncoder,
                 page_input: str = DEFAULT_INPUT) -> np.ndarray:
    """The classifier's input for (html, url) documents: the embeddings of one of PAGE_INPUTS."""
    if page_input == "whole_page":
        return encoder.encode([whole_text(html) for html, _ in documents])
    texts = [four_texts(html, url) for html, url in documents]
    vectors = [encoder.encode([t[i] for t in texts]) for i in range(4)]
    if page_input == "four_texts_and_path":
        vectors.append(encoder.encode([path_words(url) for _, url in documents]))
    return np.concatenate(vectors, axis=1)


def page_vectors(pages: Sequence[LabelledPage], encoder: TextEncoder, page_input: str = DEFAULT_INPUT) -> np.ndarray:
    return html_vectors([(page.html, f"http://{page.site}.invalid{page.path}") for page in pages], encoder,
                        page_input)


@dataclass
class SourcePageModel:
    """Standardised page vectors → logistic regression: P(source page).

    A linear model, L2-regularised, where an MLP over the same 2,560 inputs overfitted the few source pages (67
    on <data>/sites; site-grouped CV F1 0.68 → 0.76, README). Both classes weigh the same in training, so the
    probability is the page's evidence as even odds (with_click_prior adds the click's prior to it)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    # The regularisation the training pages' own site-grouped folds chose (inverse strength, sklearn's C).
    c: float

    def probability(self, vectors: np.ndarray) -> np.ndarray:
        logits = ((vectors - self.mean) / self.scale) @ self.weights + self.bias
        return (1 / (1 + np.exp(-logits))).astype(np.float32)

    def state(self) -> dict:
        """As tensors and floats: model files are read without unpickling (models.model_files)."""
        return {"mean": torch.from_numpy(self.mean), "scale": torch.from_numpy(self.scale),
                "weights": torch.from_numpy(self.weights), "bias": self.bias, "c": self.c}

    @classmethod
    def from_state(cls, state: dict) -> SourcePageModel:
        return cls(state["mean"].numpy(), state["scale"].numpy(), state["weights"].numpy(), state["bias"], state["c"])


def _fitted(vectors: np.ndarray, labels: np.ndarray, c: float):
    # scikit-learn (with the SciPy, pandas and pyarrow it imports: ~150 MB resident) is imported where a model
    # is trained, not where the stream's workers load this module to score pages with the trained one.
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, class_weight="balanced", max_iter=MAX_ITERATIONS).fit(vectors, labels)


def _scaler(vectors: np.ndarray):
    from sklearn.preprocessing import StandardScaler

    return StandardScaler().fit(vectors)


def chosen_regularisation(vectors: np.ndarray, labels: np.ndarray, groups: Sequence[str]) -> float:
    """The C of REGULARISATION_GRID with the best F1 over site-grouped inner folds of the training pages (ties:
    the stronger regularisation); DEFAULT_C where the pages' sites are too few to hold some out."""
    sites = sorted({group for group, label in zip(groups, labels, strict=True) if label})
    if len(sites) < INNER_FOLDS or labels.all():
        return DEFAULT_C
    fold_of = {site: index % INNER_FOLDS for index, site in enumerate(sites)}
    # Sites without a source page are spread over the folds too, by a stable hash of their name.
    folds = np.array([fold_of.get(group, zlib.crc32(group.encode()) % INNER_FOLDS) for group in groups])
    best_f1, best_c = -1.0, DEFAULT_C
    for c in REGULARISATION_GRID:
        predicted = np.zeros(len(labels), dtype=bool)
        for fold in range(INNER_FOLDS):
            test = folds == fold
            scaler = _scaler(vectors[~test])
            model = _fitted(scaler.transform(vectors[~test]), labels[~test], c)
            predicted[test] = model.predict_proba(scaler.transform(vectors[test]))[:, 1] >= 0.5
        f1 = scores(predicted, labels.astype(bool))["f1"]
        if f1 > best_f1:
            best_f1, best_c = f1, c
    return best_c


class RewardMLP(nn.Module):
    """The paper's recipe — MLP (HIDDEN) → P(source page) — kept for fine-tuning's reward
    (models.discovery.finetuning says why)."""

    def __init__(self, inputs: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(inputs, HIDDEN), nn.ReLU(), nn.Dropout(0.2), nn.Linear(HIDDEN, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x).squeeze(1)

    def probability(self, vectors: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return torch.sigmoid(self(torch.from_numpy(vectors.astype(np.float32)))).numpy()


def _train_mlp(vectors: np.ndarray, labels: np.ndarray, seed: int = 13) -> RewardMLP:
    torch.manual_seed(seed)
    model = RewardMLP(vectors.shape[1])
    x, y = torch.from_numpy(vectors.astype(np.float32)), torch.from_numpy(labels.astype(np.float32))
    # Source pages are few: weigh them as much as all other pages together.
    weight = torch.where(y > 0, (y == 0).sum() / max(float((y > 0).sum()), 1.0), torch.tensor(1.0))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    model.train()
    for _ in range(MLP_EPOCHS):
        loss = nn.functional.binary_cross_entropy_with_logits(model(x), y, weight=weight)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


def train_classifier(vectors: np.ndarray, labels: np.ndarray, groups: Sequence[str],
                     recipe: str = "logistic") -> SourcePageModel | RewardMLP:
    """The model on these pages (`groups`: each page's site): the logistic regression, its regularisation
    chosen on their own sites, or (recipe "mlp") the paper's MLP."""
    if recipe == "mlp":
        return _train_mlp(vectors, np.asarray(labels, dtype=bool))
    labels = np.asarray(labels, dtype=bool)
    c = chosen_regularisation(vectors, labels, groups)
    scaler = _scaler(vectors)
    model = _fitted(scaler.transform(vectors), labels, c)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    return SourcePageModel(scaler.mean_.astype(np.float32), scale.astype(np.float32),
                           model.coef_[0].astype(np.float32), float(model.intercept_[0]), c)


@dataclass
class SourcePageClassifier:
    """The trained classifier with its encoder's name and page input: P(source page) for fetched pages."""

    model: SourcePageModel | RewardMLP
    encoder: TextEncoder
    threshold: float = 0.5
    trained_on: list[str] = field(default_factory=list)
    page_input: str = DEFAULT_INPUT

    def predict(self, documents: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(source page) of each (html, url), batched."""
        if not documents:
            return np.zeros(0, dtype=np.float32)
        return self.model.probability(html_vectors(documents, self.encoder, self.page_input))

    def save(self, path: Path) -> None:
        torch.save({"format_version": FORMAT_VERSION, "encoder": self.encoder.name, "threshold": self.threshold,
                    "inputs": len(self.model.weights), "page_input": self.page_input,
                    "trained_on": self.trained_on, "state": self.model.state()}, path)

    @classmethod
    def load(cls, path: Path) -> SourcePageClassifier:
        saved = load_checked(path, "source-page classifier", FORMAT_VERSION)
        return cls(SourcePageModel.from_state(saved["state"]), get_encoder(saved["encoder"]), saved["threshold"], saved["trained_on"],
                   saved["page_input"])


def retrained_classifier_path(settings: Settings) -> Path:
    """Where `sourcewatch retrain classifier` swaps a better classifier in."""
    return settings.home / "models" / "classifier.pt"


def current_classifier_path(settings: Settings) -> Path:
    """The classifier workers run: the one set in the settings, else the last one retraining swapped in, else
    the one shipped in the package."""
    if settings.source_classifier is not None:
        return settings.source_classifier
    retrained = retrained_classifier_path(settings)
    return retrained if retrained.is_file() else DEFAULT_CLASSIFIER


def with_click_prior(page_probability: float, click_score: float) -> float:
    """P(source page) of a page an agent clicked: the classifier, trained with both classes weighing the same,
    gives the page's evidence as odds; the agent's score of the link it clicked, trained on whether a click
    reaches a source page, gives the prior odds. Their product, as a probability (logits add)."""
    eps = 1e-6
    page, click = (min(max(p, eps), 1 - eps) for p in (page_probability, click_score))
    logit = np.log(page / (1 - page)) + np.log(click / (1 - click))
    return float(1 / (1 + np.exp(-logit)))


def train_source_classifier(paths: Sequence[Path], encoder_name: str = "use", page_input: str = DEFAULT_INPUT,
                            recipe: str = "logistic") -> SourcePageClassifier:
    """The classifier trained on every labelled page of these sites."""
    pages = labelled_pages(paths)
    encoder = get_encoder(encoder_name)
    model = train_classifier(page_vectors(pages, encoder, page_input), np.array([page.source for page in pages]),
                             [page.site for page in pages], recipe)
    return SourcePageClassifier(model, encoder, trained_on=sorted({page.site for page in pages}),
                                page_input=page_input)


def scores(predicted: np.ndarray, labels: np.ndarray) -> dict:
    tp = int(np.sum(predicted & labels))
    fp, fn = int(np.sum(predicted & ~labels)), int(np.sum(~predicted & labels))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {"accuracy": round(float(np.mean(predicted == labels)), 4), "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0,
            "pages": len(labels), "source_pages": int(labels.sum())}


def cross_validated_predictions(pages: Sequence[LabelledPage], vectors: np.ndarray, folds: int,
                                seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Site-grouped K-fold cross-validation: each test page's prediction by the fold that held its site out, and
    which pages were test pages (TRAIN_ONLY pages never are)."""
    sites = sorted({page.site for page in pages if not page.site.startswith(TRAIN_ONLY)})
    random.Random(seed).shuffle(sites)
    fold_of = {site: index % folds for index, site in enumerate(sites)}
    labels = np.array([page.source for page in pages])
    tested = np.array([page.site in fold_of for page in pages])
    predicted = np.zeros(len(pages), dtype=bool)
    for fold in range(folds):
        test = np.array([fold_of.get(page.site) == fold for page in pages])
        groups = [page.site for page, train in zip(pages, ~test, strict=True) if train]
        predicted[test] = train_classifier(vectors[~test], labels[~test], groups).probability(vectors[test]) >= 0.5
    return predicted, tested


def cross_validate(pages: Sequence[LabelledPage], vectors: np.ndarray, folds: int, seed: int = 0) -> dict:
    """Site-grouped K-fold cross-validation: pooled accuracy, precision, recall, F1 on the held-out folds."""
    predicted, tested = cross_validated_predictions(pages, vectors, folds, seed)
    labels = np.array([page.source for page in pages])
    return scores(predicted[tested], labels[tested])
