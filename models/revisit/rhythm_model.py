"""TSP-R: the TSP LSTM (Shi et al.) on top of the page's learned rhythm — the model the live scheduler runs.

A crawler knows a page's updates exactly up to its last fetch (the listing dates its items) and nothing
after: ticks since then are unknown, not quiet. The page's rhythm (models.revisit.rhythm: its rate and
hour/day profile, learned online from those dated observations with the training pages as prior) gives a
baseline P(update) for every tick; the LSTM reads the last WINDOW ticks up to the one to predict — per tick
known update / known quiet / unknown, the rhythm's logit there, the ticks since the last known update and
since the last fetch, how much history the page has — and adds a learned correction to the rhythm's logit at
the predicted tick. It reads no time of day or week: a global model that did (the previous TSP) learns the
training publisher's clock and overrides a page's own; here the clock is the page's rhythm alone. So a page the model never saw starts on its own clock (its first
read's dated items), and the LSTM learns what the slot table cannot: bursts, gaps, what a fresh update says
about the next hours.

The decision is made on the relative odds, not on P itself: fetch a page at a tick when the odds of an update
there over the page's own mean odds (its rhythm averaged over the week) reach the threshold. The figures
users judge a scheduler by are per page, averaged over pages (DESIGN.md's macro timeliness and friendliness):
a fetch at a tick with P adds P / E[update ticks] to its page's timeliness and costs (1 − P) / E[quiet ticks]
of its friendliness, so the fetches that buy the most of both are where that ratio, the relative odds, is
highest — whatever the page's rate. A threshold on P itself spends fetches on busy pages at every tick and
leaves a rare page's one likely tick unfetched (measured under the cold-start protocol: the relative odds
dominate P's curve on both EPA and endoflife).

Training reproduces what the stream sees: on each training page, watches begin at random moments with only a
first read (the last FIRST_READ_ITEMS items) known, then a crawler fetching every 1…MAX_FETCH_INTERVAL ticks
reveals the ticks up to each fetch; the target is the true bit of the tick (the training pages' history is
known whole). Negatives are subsampled and weighted back, so P stays calibrated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from models.model_files import load_checked
from models.revisit.data import SourceSeries
from models.revisit.fitting import weighted_bce_epoch
from models.revisit.rhythm import (
    RhythmPrior,
    fading,
    fit_prior,
    mean_tick_probability,
    relative_odds,
    slot_count,
    slot_rates,
    slot_sums,
    slots_of,
)

# 3: the threshold and validation curve are on the relative odds (2: on P).
FORMAT_VERSION = 3
HIDDEN = 32
INPUTS = 6
# Ticks read before the predicted one, and the predicted tick itself.
WINDOWS = {"hours": 24, "days": 14}
GAP_CAP = 2000
FIRST_READ_ITEMS = 20
MAX_FETCH_INTERVAL = 12
WATCHES_PER_SOURCE = 4
WATCH_SPAN_DAYS = 60
NEGATIVES_PER_WATCH = 250
EPOCHS = 6
BATCH = 256
LOGIT_SCALE = 10.0
# The thresholds a validation curve is drawn over: relative odds, from fetching nearly every tick to fetching
# only ticks ten times likelier than the page's usual.
ODDS_GRID = np.geomspace(0.01, 10.0, 24)


def window_length(tick_hours: float) -> int:
    return WINDOWS["days"] if tick_hours >= 24 else WINDOWS["hours"]


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return np.log(p / (1 - p))


@dataclass(frozen=True)
class KnownWindow:
    """What a crawler knows of n pages around the ticks to predict, each as a window of `w` ticks ending at
    the predicted one (oldest first): the arrays the model's input is made of."""

    # (n, w) epoch tick index of each window tick
    ticks: np.ndarray
    # (n, w) whether the tick's updates are known (observed by the first read or a fetch), and if it had one
    known: np.ndarray
    updated: np.ndarray
    # (n,) the last known update tick before the window (−∞ as a very old tick when none), the last fetch
    last_update_before: np.ndarray
    last_fetch: np.ndarray
    # (n, slots) the rhythm's slot sums: update ticks seen and ticks observed
    counts: np.ndarray
    exposure: np.ndarray


def rhythm_logits(prior: RhythmPrior, window: KnownWindow) -> np.ndarray:
    """The rhythm's logit at every window tick (n, w)."""
    rates = slot_rates(prior, window.counts, window.exposure)
    slots = slots_of(window.ticks, prior.tick_hours)
    return logit(1 - np.exp(-np.take_along_axis(rates, slots, axis=1)))


def model_inputs(prior: RhythmPrior, window: KnownWindow) -> tuple[np.ndarray, np.ndarray]:
    """(inputs (n, w, INPUTS), the rhythm's logit at each predicted tick (n,))."""
    logits = rhythm_logits(prior, window)
    known, updated = window.known, window.updated & window.known
    ticks = window.ticks
    last = np.maximum.accumulate(np.where(updated, ticks, window.last_update_before[:, None]), axis=1)
    gap = np.minimum(ticks - last, GAP_CAP)
    unknown_for = np.clip(ticks - window.last_fetch[:, None], 0, GAP_CAP)
    history = np.log1p(window.counts.sum(1)) / np.log(1000)
    scale = np.log1p(GAP_CAP)
    # No time of day or week: the page's clock is its rhythm's, never one the training pages share.
    inputs = np.concatenate([
        updated[..., None], (known & ~updated)[..., None], (logits / LOGIT_SCALE)[..., None],
        (np.log1p(gap) / scale)[..., None], (np.log1p(unknown_for) / scale)[..., None],
        np.broadcast_to(history[:, None, None], (*ticks.shape, 1))], axis=2)
    return inputs.astype(np.float32), logits[:, -1].astype(np.float32)


class RhythmLSTM(nn.Module):
    def __init__(self, prior: RhythmPrior, hidden: int = HIDDEN) -> None:
        super().__init__()
        self.prior = prior
        self.hidden = hidden
        self.window = window_length(prior.tick_hours)
        # The operating point: fetch when the relative odds reach the threshold (chosen on validation; None
        # until chosen).
        self.threshold: float | None = None
        # (threshold, timeliness, friendliness) on the validation watches: the operating knob reads it.
        self.validation_curve: list[tuple[float, float, float]] = []
        self.trained_on: dict = {}
        self.version = "untrained"
        self.lstm = nn.LSTM(INPUTS, hidden, batch_first=True)
        self.out = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    @property
    def tick_hours(self) -> float:
        return self.prior.tick_hours

    def forward(self, inputs: torch.Tensor, base_logits: torch.Tensor) -> torch.Tensor:
        states, _ = self.lstm(inputs)
        return base_logits + self.out(states[:, -1]).squeeze(1)

    @property
    def operating_threshold(self) -> float:
        return self.threshold if self.threshold is not None else 1.0

    def threshold_for(self, target_timeliness: float) -> float:
        """The threshold whose validation timeliness reaches the target with the highest friendliness (the
        operating knob); the chosen threshold when the curve is not known."""
        reaching = [(f, threshold) for threshold, t, f in self.validation_curve if t >= target_timeliness]
        return max(reaching)[1] if reaching else self.operating_threshold

    @torch.inference_mode()
    def predict(self, window: KnownWindow) -> np.ndarray:
        """P(update) at each window's last tick."""
        self.eval()
        inputs, base = model_inputs(self.prior, window)
        if not len(inputs):
            return np.zeros(0)
        return torch.sigmoid(self(torch.from_numpy(inputs), torch.from_numpy(base))).numpy()

    def priority(self, window: KnownWindow, probabilities: np.ndarray | None = None) -> np.ndarray:
        """The decision score at each window's last tick: the relative odds of its P (given, or predicted)."""
        if probabilities is None:
            probabilities = self.predict(window)
        return relative_odds(probabilities, mean_tick_probability(self.prior, window.counts, window.exposure))

    def save(self, path: Path) -> None:
        torch.save({"format_version": FORMAT_VERSION, "kind": "tsp-rhythm", "prior": self.prior.as_dict(),
                    "hidden": self.hidden, "threshold": self.threshold, "validation_curve": self.validation_curve,
                    "trained_on": self.trained_on, "version": self.version, "state": self.state_dict()}, path)

    @classmethod
    def load(cls, path: Path) -> RhythmLSTM:
        saved = load_checked(path, "revisit model (TSP-R)", FORMAT_VERSION)
        model = cls(RhythmPrior.from_dict(saved["prior"]), saved["hidden"])
        model.load_state_dict(saved["state"])
        model.threshold, model.trained_on, model.version = saved["threshold"], saved["trained_on"], saved["version"]
        model.validation_curve = [tuple(point) for point in saved["validation_curve"]]
        return model


def epoch_start(series: SourceSeries) -> int:
    """The epoch tick index of the series' tick 0."""
    return round(series.start.timestamp() / 3600 / series.tick_hours)


def first_read_start(series: SourceSeries, watch_start: int) -> int:
    """The series tick of the oldest of the last FIRST_READ_ITEMS items listed before `watch_start` (what a
    first read of the listing shows), or `watch_start` when nothing was listed."""
    ticks = np.flatnonzero(series.counts[:watch_start])
    if not len(ticks):
        return watch_start
    items = np.cumsum(series.counts[ticks][::-1])
    reach = int(np.searchsorted(items, FIRST_READ_ITEMS))
    return int(ticks[::-1][min(reach, len(ticks) - 1)])


def series_slot_sums(series: SourceSeries, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """(counts, exposure) per slot over the series ticks [start, end), faded to the tick before `end`."""
    ticks = epoch_start(series) + np.arange(start, end)
    updated = series.updated[start:end]
    return slot_sums(ticks[updated], np.ones(int(updated.sum())), ticks, epoch_start(series) + end - 1,
                     series.tick_hours)


def training_prior(sources: Sequence[SourceSeries], fit_ends: Sequence[int]) -> RhythmPrior:
    """The prior from what the training pages do at the end of their fit ranges (their faded sums there)."""
    sums = [series_slot_sums(series, 0, end) for series, end in zip(sources, fit_ends)]
    return fit_prior(np.array([c for c, _ in sums]), np.array([e for _, e in sums]), sources[0].tick_hours)


def faded_sums_at(series: SourceSeries, first: int, last: int, known_until: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(counts, exposure) per slot of the ticks [first, f] for each f in `known_until` (all in [first, last]),
    faded to f: running sums scaled by the fading factor relative to `first`."""
    size, fade = slot_count(series.tick_hours), fading(series.tick_hours)
    ticks = np.arange(first, last + 1)
    slots = slots_of(epoch_start(series) + ticks, series.tick_hours)
    scale = fade ** -(ticks - first).astype(np.float64)
    counts = np.zeros((len(ticks) + 1, size))
    exposure = np.zeros((len(ticks) + 1, size))
    counts[np.arange(len(ticks)) + 1, slots] = series.updated[ticks] * scale
    exposure[np.arange(len(ticks)) + 1, slots] = scale
    rows = known_until - first + 1
    back = (fade ** (known_until - first).astype(np.float64))[:, None]
    return np.cumsum(counts, axis=0)[rows] * back, np.cumsum(exposure, axis=0)[rows] * back


def _watch_samples(series: SourceSeries, fit_end: int, w: int,
                   rng: np.random.Generator) -> tuple[KnownWindow, np.ndarray, np.ndarray] | None:
    """Windows, targets and weights of one simulated watch of the series, starting at a random tick ≥ w."""
    span = int(WATCH_SPAN_DAYS * 24 / series.tick_hours)
    watch = int(rng.integers(w, fit_end - 1))
    end = min(fit_end, watch + span)
    first = first_read_start(series, watch)
    interval = int(rng.integers(1, MAX_FETCH_INTERVAL + 1))
    phase = int(rng.integers(interval))
    targets = np.arange(watch, end)
    updated = series.updated
    positives, negatives = targets[updated[targets]], targets[~updated[targets]]
    sampled = rng.choice(negatives, min(len(negatives), NEGATIVES_PER_WATCH), replace=False) if len(negatives) else negatives
    ticks = np.concatenate([positives, sampled])
    if not len(ticks):
        return None
    weights = np.concatenate([np.ones(len(positives)), np.full(len(sampled), len(negatives) / max(len(sampled), 1))])
    # The last fetch before each target: the first read at watch − 1, then every `interval` ticks.
    fetches_since = np.floor((ticks - 1 - watch - phase) / interval)
    last_fetch = np.where(ticks - 1 >= watch + phase, watch + phase + fetches_since * interval, watch - 1).astype(int)
    origin = epoch_start(series)
    counts, exposure = faded_sums_at(series, first, end - 1, np.maximum(last_fetch, first))
    # Faded on to the predicted tick, as the stream holds them; a watch whose first read listed nothing knows
    # no tick before its first fetch.
    ahead = np.where(last_fetch < first, 0.0, fading(series.tick_hours) ** (ticks - last_fetch))[:, None]
    counts, exposure = counts * ahead, exposure * ahead
    width = window_length(series.tick_hours)
    window_ticks = ticks[:, None] - np.arange(width - 1, -1, -1)[None, :]
    known = (window_ticks >= first) & (window_ticks <= last_fetch[:, None])
    every = np.arange(len(series.counts))
    last_true = np.maximum.accumulate(np.where(updated, every, -GAP_CAP * 10))
    before = np.clip(np.minimum(window_ticks[:, 0] - 1, last_fetch), 0, None)
    last_update_before = np.where((window_ticks[:, 0] - 1 >= 0) & (last_true[before] >= first),
                                  last_true[before], -GAP_CAP * 10)
    window = KnownWindow(window_ticks + origin, known, updated[np.clip(window_ticks, 0, None)] & known,
                         last_update_before + origin, last_fetch + origin, counts, exposure)
    return window, updated[ticks].astype(np.float32), weights.astype(np.float32)


def _samples(sources: Sequence[SourceSeries], fit_ends: Sequence[int], prior: RhythmPrior,
             rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    inputs, bases, targets, weights = [], [], [], []
    width = window_length(prior.tick_hours)
    for series, fit_end in zip(sources, fit_ends):
        if fit_end <= width + 2:
            continue
        for _ in range(WATCHES_PER_SOURCE):
            made = _watch_samples(series, fit_end, width, rng)
            if made is None:
                continue
            window, target, weight = made
            x, base = model_inputs(prior, window)
            inputs.append(x)
            bases.append(base)
            targets.append(target)
            weights.append(weight)
    return tuple(torch.from_numpy(np.concatenate(part)) for part in (inputs, bases, targets, weights))


def train(sources: Sequence[SourceSeries], fit_ends: Sequence[int], seed: int = 13, epochs: int = EPOCHS,
          progress: Callable[[int, float], None] | None = None) -> RhythmLSTM:
    """One global model over simulated watches of every source's ticks before its fit end; the prior from
    the same ticks."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    prior = training_prior(sources, fit_ends)
    model = RhythmLSTM(prior)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(epochs):
        x, base, y, w = _samples(sources, fit_ends, prior, rng)
        w = w / w.mean()
        model.train()
        loss = weighted_bce_epoch(model, optimizer, (x, base), y, w, BATCH)
        if progress:
            progress(epoch + 1, loss)
    return model


DEFAULT_MODEL = Path(__file__).with_name("revisit_default.pt")


def load_model(path: Path | None = None) -> RhythmLSTM:
    """The model at `path`, or the default one shipped in the package."""
    path = path or DEFAULT_MODEL
    if not path.is_file():
        raise FileNotFoundError(f"no revisit model at {path}: train one with `sourcewatch train revisit`")
    return RhythmLSTM.load(path)
