"""TSP (Shi et al.): an LSTM over a source page's update history that gives P(update at the next tick).

Input per tick: the updated/not bit, the ticks since the last update (log-scaled: the window is short, a
page's cadence is often longer) and the tick's cyclic hour of day, day of week and day of month; a window
of the last WINDOW ticks; hidden size 128; one global model for all sources with a learned
per-source embedding (row 0 is the cold-start embedding, used for sources it never saw). Updates are rare,
so the loss weighs positive ticks by the negative/positive ratio of the training ticks. Trained on each
source's training ticks only. The recipe (weights, hyper-parameters, source ids) saves to one file, loaded
with weights_only=True.

Training windows mix the true bits (the oracle variant, as the logistic-regression baseline reads them) with
what a crawler fetching at a fixed random interval would have seen (what the live scheduler reads), and a
share of them train the cold-start row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from models.model_files import load_checked
from models.revisit.data import SourceSeries, cyclic_time
from models.revisit.fitting import weighted_bce_epoch

WINDOW = 10
HIDDEN = 128
SOURCE_EMBEDDING = 8
EPOCHS = 4
BATCH = 512
# Negative training windows kept per source and epoch (all positives are kept): bounds an epoch's cost.
NEGATIVES_PER_SOURCE = 1500
# Share of training windows that stand for a source the model never saw (the cold-start row 0 learns from
# them), and share whose bits are what a crawler fetching every 1…MAX_OBSERVED_INTERVAL ticks would have
# seen rather than the true bits (live, the model only ever reads those).
COLD_START_SHARE = 0.1
OBSERVED_SHARE = 0.5
MAX_OBSERVED_INTERVAL = 8
# Ticks since the last update are capped here (and stand at the cap when there was none).
GAP_CAP = 1000
INPUTS = 8
FORMAT_VERSION = 3


def gap_feature(bits: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """For each row of a window of bits (n, WINDOW) and each of its ticks: the ticks since the last update at
    or before it, as log(1 + ticks) / log(1 + GAP_CAP). `prior`: per row, the position of the last update
    before the window (negative, relative to its first tick; −GAP_CAP when there was none)."""
    positions = np.arange(bits.shape[1])
    last = np.maximum.accumulate(np.where(bits > 0, positions, -GAP_CAP), axis=1)
    gap = np.minimum(positions - np.maximum(last, np.maximum(prior, -GAP_CAP)[:, None]), GAP_CAP)
    return (np.log1p(gap) / np.log1p(GAP_CAP)).astype(np.float32)


def window_inputs(bits: np.ndarray, prior: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The model's input (n, WINDOW, INPUTS): each tick's bit, its gap feature and its cyclic time (n, WINDOW, 6)."""
    bits = bits.astype(np.float32)
    return np.concatenate([bits[:, :, None], gap_feature(bits, prior)[:, :, None], times], axis=2).astype(np.float32)


def windows_before(series: SourceSeries, ticks: np.ndarray, bits: np.ndarray | None = None) -> np.ndarray:
    """For each tick t, the inputs of ticks t−WINDOW … t−1 (see window_inputs), from the true updated bits or
    the given `bits`."""
    every = np.arange(len(series.counts))
    bits = series.updated if bits is None else bits
    index = np.clip(ticks[:, None] - np.arange(WINDOW, 0, -1)[None, :], 0, None)
    last_update = np.maximum.accumulate(np.where(bits, every, -GAP_CAP - len(every)))
    first = index[:, 0]
    prior = np.where(first > 0, last_update[np.maximum(first - 1, 0)] - first, -GAP_CAP)
    return window_inputs(bits[index], prior, cyclic_time(series, every)[index])


def observed_bits(updated: np.ndarray, fetch: np.ndarray) -> np.ndarray:
    """What a crawler fetching at `fetch` ticks sees: 1 at a fetch tick when the page gained items since the
    previous fetch, 0 at every other tick."""
    fetch_ticks = np.flatnonzero(fetch)
    gained = np.diff(np.concatenate([[0], np.cumsum(updated)[fetch_ticks]])) > 0
    bits = np.zeros(len(updated), dtype=bool)
    bits[fetch_ticks[gained]] = True
    return bits


class UpdatePredictor(nn.Module):
    def __init__(self, source_ids: Sequence[str], hidden: int = HIDDEN, embedding: int = SOURCE_EMBEDDING) -> None:
        super().__init__()
        # The operating point: fetch when P(update) ≥ threshold (chosen on validation; None until chosen).
        self.threshold: float | None = None
        self.tick_hours = 1.0
        # What it was trained on, and when: shown with every decision it makes.
        self.trained_on: dict = {}
        self.version = "untrained"
        self.source_ids = list(source_ids)
        self.index = {source: i + 1 for i, source in enumerate(self.source_ids)}
        self.hidden, self.embedding_size = hidden, embedding
        self.sources = nn.Embedding(len(self.source_ids) + 1, embedding)
        self.lstm = nn.LSTM(INPUTS + embedding, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, windows: torch.Tensor, sources: torch.Tensor) -> torch.Tensor:
        embedded = self.sources(sources)[:, None, :].expand(-1, windows.shape[1], -1)
        states, _ = self.lstm(torch.cat([windows, embedded], dim=2))
        return self.out(states[:, -1]).squeeze(1)

    @property
    def operating_threshold(self) -> float:
        """The threshold decisions use: the one chosen on validation, else an even 0.5."""
        return self.threshold if self.threshold is not None else 0.5

    def source_index(self, source_id: str) -> int:
        return self.index.get(source_id, 0)

    @torch.inference_mode()
    def probabilities(self, series: SourceSeries, a: int, b: int) -> np.ndarray:
        """P(update) at each tick of [a, b) from the WINDOW ticks before it."""
        self.eval()
        windows = torch.from_numpy(windows_before(series, np.arange(a, b)))
        sources = torch.full((len(windows),), self.source_index(series.source_id), dtype=torch.long)
        chunks = [torch.sigmoid(self(windows[i:i + 8192], sources[i:i + 8192])) for i in range(0, len(windows), 8192)]
        return torch.cat(chunks).numpy() if chunks else np.zeros(0)

    @torch.inference_mode()
    def predict(self, windows: np.ndarray, source_ids: Sequence[str]) -> np.ndarray:
        """P(update) for a batch of windows (n, WINDOW, INPUTS), one per source (unknown ones take the cold start)."""
        self.eval()
        sources = torch.tensor([self.source_index(source) for source in source_ids], dtype=torch.long)
        return torch.sigmoid(self(torch.from_numpy(np.asarray(windows, dtype=np.float32)), sources)).numpy()

    def save(self, path: Path) -> None:
        torch.save({"format_version": FORMAT_VERSION, "source_ids": self.source_ids, "hidden": self.hidden,
                    "embedding": self.embedding_size, "threshold": self.threshold, "tick_hours": self.tick_hours,
                    "trained_on": self.trained_on, "version": self.version, "state": self.state_dict()}, path)

    @classmethod
    def load(cls, path: Path) -> UpdatePredictor:
        saved = load_checked(path, "revisit model", FORMAT_VERSION)
        model = cls(saved["source_ids"], saved["hidden"], saved["embedding"])
        model.load_state_dict(saved["state"])
        model.threshold, model.tick_hours = saved["threshold"], saved["tick_hours"]
        model.trained_on, model.version = saved["trained_on"], saved["version"]
        return model


def _training_windows(series: SourceSeries, fit_end: int, rng: np.random.Generator) -> np.ndarray:
    """Ticks whose window trains: every updated tick and a sample of the others, inside [WINDOW, fit_end)."""
    ticks = np.arange(WINDOW, fit_end)
    updated = series.updated[ticks]
    negatives = ticks[~updated]
    if len(negatives) > NEGATIVES_PER_SOURCE:
        negatives = rng.choice(negatives, NEGATIVES_PER_SOURCE, replace=False)
    return np.concatenate([ticks[updated], negatives])


def _crawler_view(series: SourceSeries, rng: np.random.Generator) -> np.ndarray:
    """The series' bits as a crawler fetching every k ticks (k and phase drawn at random) would see them."""
    interval = int(rng.integers(1, MAX_OBSERVED_INTERVAL + 1))
    fetch = (np.arange(len(series.counts)) + int(rng.integers(interval))) % interval == 0
    return observed_bits(series.updated, fetch)


def train(sources: Sequence[SourceSeries], fit_ends: Sequence[int], seed: int = 13, epochs: int = EPOCHS,
          progress: Callable[[int, float], None] | None = None) -> UpdatePredictor:
    """One global model over every source's ticks before its fit end."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = UpdatePredictor([series.source_id for series in sources])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(epochs):
        model.train()
        windows, targets, ids, weights = [], [], [], []
        for series, fit_end in zip(sources, fit_ends):
            ticks = _training_windows(series, fit_end, rng)
            labels = series.updated[ticks]
            # Each source's sampled negatives stand for all of its quiet ticks.
            quiet, sampled = (~series.updated[WINDOW:fit_end]).sum(), max((~labels).sum(), 1)
            observed = rng.random(len(ticks)) < OBSERVED_SHARE
            windows.append(np.where(observed[:, None, None], windows_before(series, ticks, _crawler_view(series, rng)),
                                    windows_before(series, ticks)))
            targets.append(labels.astype(np.float32))
            cold = rng.random(len(ticks)) < COLD_START_SHARE
            ids.append(np.where(cold, 0, model.source_index(series.source_id)))
            weights.append(np.where(labels, 1.0, quiet / sampled).astype(np.float32))
        x, y = torch.from_numpy(np.concatenate(windows)), torch.from_numpy(np.concatenate(targets))
        s, w = torch.from_numpy(np.concatenate(ids)).long(), torch.from_numpy(np.concatenate(weights))
        # Updates are rare: weigh them as much as all quiet ticks together.
        w = torch.where(y > 0, w * (w[y == 0].sum() / max(float(w[y > 0].sum()), 1.0)), w)
        w = w / w.mean()
        loss = weighted_bce_epoch(model, optimizer, (x, s), y, w, BATCH)
        if progress:
            progress(epoch + 1, loss)
    return model

