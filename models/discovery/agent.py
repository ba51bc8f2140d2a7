"""The RL crawler agent (Liao & Chang; DESIGN.md row 1): a policy network scores every anchor the agent could
click, and learns by REINFORCE which ones lead to a site's event/news listing page.

π(a) = sigmoid(MLP(Anchor-Net(a) ⊕ Tag-Net(a))), the chance that clicking a lies on the way to a source page:
- Anchor-Net: the anchor's text embedded by a pretrained multilingual sentence encoder (cached: menus repeat
  on every page of a site) → MLP. Our addition: the words of the link's URL path, embedded the same way,
  beside the text (image links have no text, and paths like /events/ carry the same words).
- Tag-Net: the bag of tags of the anchor's DOM tag path → BiLSTM over the page's anchors in document order,
  so an anchor is read with its menu neighbours.
Our addition: a second head on the same joint features, h(a), the chance that the click lands on a source page
itself — π is high for a hub page's link too, so judging the page a click opens takes h as its prior. h is
learned on the sites the agent trains on (and, fine-tuned, on what the classifier judges of a simulated web), so
as a prior it is recalibrated (Platt's form, `click_prior`) on clicks of brief agents on sites they never saw.
The action set is the current page's anchors ∪ the frontier of anchors seen and not clicked, each scored in the
context of the page it was last seen on. While training the agent explores ε-greedily and keeps the
log-softmax of each click over its action set (for REINFORCE, Eq. 8/10), and — with the auxiliary task — its
prediction of every anchor's box and its neighbours' from the same joint features (models.discovery.anchor_boxes); in
use it clicks the best anchor, and stops when the best score is ≤ η, the adaptive stop threshold (Eq. 5); with
η None it never stops on its score. With a learned stopping model (models.discovery.stopping) that model
decides instead of η.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

from models.discovery.anchor_boxes import AnchorBoxes
from models.discovery.episode import FrontierLink
from models.discovery.policies import Candidate
from models.discovery.stopping import StoppingModel, stop_features
from models.model_files import load_checked
from models.text_encoders import TextEncoder, get_encoder

FORMAT_VERSION = 3
BOX_TARGETS = 12
DEFAULT_AGENT = Path(__file__).with_name("discovery_default.pt")
TAGS = ("html", "body", "div", "span", "a", "ul", "ol", "li", "nav", "header", "footer", "main", "section",
        "article", "aside", "p", "h1", "h2", "h3", "h4", "h5", "h6", "table", "tbody", "thead", "tr", "td", "th",
        "form", "button", "strong", "em", "b", "i", "img", "figure", "dl", "dt", "dd", "center", "font",
        "small", "label", "noscript", "menu", "details", "summary", "address", "time", "picture")
_TAG_INDEX = {tag: index for index, tag in enumerate(TAGS)}
_PATH_WORDS = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class AgentShape:
    text_dim: int
    anchor_hidden: int = 128
    tag_hidden: int = 64
    joint_hidden: int = 64


@lru_cache(maxsize=8192)
def tag_bag(tag_path: str) -> np.ndarray:
    """How often each known tag (and, last, any other tag) occurs on the anchor's path from <html>. Cached: a
    site's menus put many anchors on one path; the array is shared, so it is read-only."""
    bag = np.zeros(len(TAGS) + 1, dtype=np.float32)
    for tag in tag_path.split("/"):
        bag[_TAG_INDEX.get(tag, len(TAGS))] += 1
    bag = np.log1p(bag)
    bag.flags.writeable = False
    return bag


def path_words(url: str) -> str:
    return " ".join(_PATH_WORDS.findall(unquote(urlsplit(url).path).replace(".html", " ")))


class PolicyNet(nn.Module):
    def __init__(self, shape: AgentShape) -> None:
        super().__init__()
        self.shape = shape
        self.anchor_net = nn.Sequential(nn.Linear(2 * shape.text_dim, shape.anchor_hidden), nn.ReLU())
        self.tag_input = nn.Sequential(nn.Linear(len(TAGS) + 1, shape.tag_hidden), nn.ReLU())
        self.tag_net = nn.LSTM(shape.tag_hidden, shape.tag_hidden, batch_first=True, bidirectional=True)
        self.joint = nn.Sequential(nn.Linear(shape.anchor_hidden + 2 * shape.tag_hidden, shape.joint_hidden),
                                   nn.ReLU())
        self.policy_head = nn.Linear(shape.joint_hidden, 1)
        self.hit_head = nn.Linear(shape.joint_hidden, 1)
        # The auxiliary task (training only): each anchor's box and its neighbours' from the same features.
        self.box_head = nn.Linear(shape.joint_hidden, BOX_TARGETS)

    def features(self, texts: torch.Tensor, bags: torch.Tensor, lengths: Sequence[int] = ()) -> torch.Tensor:
        """The joint features of one page's anchors, in document order: texts (n, 2·text_dim), bags (n, tags + 1);
        or of several pages' anchors one page after another, `lengths` their anchors per page (each page's tag
        paths read as a sequence of their own)."""
        tag_inputs = self.tag_input(bags)
        if len(lengths) < 2:
            tags = self.tag_net(tag_inputs.unsqueeze(0))[0].squeeze(0)
        else:
            read, _ = self.tag_net(pack_sequence(torch.split(tag_inputs, list(lengths)), enforce_sorted=False))
            padded, _ = pad_packed_sequence(read, batch_first=True)
            tags = torch.cat([padded[page, :length] for page, length in enumerate(lengths)])
        return self.joint(torch.cat([self.anchor_net(texts), tags], dim=1))

    def forward(self, texts: torch.Tensor, bags: torch.Tensor,
                lengths: Sequence[int] = ()) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits of one page's anchors (or several pages', as `features` reads them): π's and h's."""
        features = self.features(texts, bags, lengths)
        return self.policy_head(features).squeeze(1), self.hit_head(features).squeeze(1)


@dataclass
class _Page:
    urls: list[str]
    texts: torch.Tensor
    bags: torch.Tensor
    logits: torch.Tensor | None = None
    hit_logits: torch.Tensor | None = None
    # While learning with the auxiliary task: the anchors' box targets and the net's prediction of them.
    box_targets: torch.Tensor | None = None
    boxes: torch.Tensor | None = None


@dataclass
class Click:
    """One click of a training episode: its log-probability over the action set, its π and h logits."""
    log_prob: torch.Tensor
    logit: torch.Tensor
    hit_logit: torch.Tensor


def pick(logits: torch.Tensor, hit_logits: torch.Tensor, frontier: Sequence[Candidate], clicks: int,
         eta: float | None, stopper: StoppingModel | None) -> tuple[int, float, list[float], str | None]:
    """The link with the highest π (the first of equals), its score, the stopping model's view of the choice,
    and why to stop here (None to go on): by the learned stopping model where the agent has one, else when the
    best score is ≤ η (Eq. 5; None never stops)."""
    best = int(torch.argmax(logits))
    score = float(torch.sigmoid(logits[best]))
    state = stop_features(torch.sigmoid(logits).numpy(), torch.sigmoid(hit_logits).numpy(), frontier, clicks)
    if stopper is not None:
        return best, score, state, stopper.stop_reason(state)
    return best, score, state, f"best score {score:.3f} ≤ η {eta:.3f}" if eta is not None and score <= eta else None


def stored_choice(frontier: list[FrontierLink], eta: float | None, stopper: StoppingModel | None = None,
                  clicks: int = 0) -> tuple[FrontierLink | str, list[float]]:
    """The agent's pick from the logits it gave each link on the last page the link was seen on (the stream keeps
    them in the episode's state), `clicks` into the episode: the rule `RLCrawler.choose` applies to fresh ones;
    a stop comes with its reason. With it, the stopping model's view of the choice (stop_features)."""
    logits = torch.tensor([link.logit for link in frontier], dtype=torch.float32)
    hits = torch.tensor([link.hit_logit if link.hit_logit is not None else 0.0 for link in frontier],
                        dtype=torch.float32)
    best, _, view, stop = pick(logits, hits, [link.candidate() for link in frontier], clicks, eta, stopper)
    return (stop if stop is not None else frontier[best]), view


def probability(logit: float) -> float:
    """A stored logit as the probability `choose` computes from it (float32, as the net gives it)."""
    return float(torch.sigmoid(torch.tensor(logit, dtype=torch.float32)))


def prior_of_click(hit_logit: float, calibration: tuple[float, float] | None) -> float:
    """The prior that the page a click opens is a source page: h of the clicked link, through the agent's
    calibration where it has one (RLCrawler.click_prior)."""
    if calibration is not None:
        hit_logit = calibration[0] * hit_logit + calibration[1]
    return probability(hit_logit)


@dataclass
class RLCrawler:
    net: PolicyNet
    encoder: TextEncoder
    # Eq. 5: stop when the best anchor's score is ≤ eta; None clicks until the budget is spent.
    eta: float | None = None
    epsilon: float = 0.0
    learning: bool = False
    trained_on: list[str] = field(default_factory=list)
    # The unlabelled sites it was fine-tuned on with the classifier as reward (models.discovery.finetuning).
    finetuned_on: list[str] = field(default_factory=list)
    # Rendered anchor boxes of the training pages, for the auxiliary task (None: no auxiliary task).
    anchor_boxes: AnchorBoxes | None = None
    name: str = "rl"
    # The learned stopping decision; None stops by η.
    stopper: StoppingModel | None = None
    # (a, b): the prior that a click lands on a source page is sigmoid(a · h's logit + b), fitted on held-out
    # clicks (models.discovery.training.fit_click_prior); None: h as the net gives it.
    click_prior: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        self.reset(0)

    def reset(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.pages: list[_Page] = []
        # url → (page, position) where the anchor was last seen
        self.seen_at: dict[str, tuple[int, int]] = {}
        self.clicks: list[Click] = []
        self.best_scores: list[float] = []
        # The state at each choice, as the stopping model reads it (not while learning).
        self.stop_states: list[list[float]] = []
        # h of the link clicked last: the prior for judging the page it opened.
        self.last_hit_score = 0.5
        # h's logit of every link clicked, in order (the samples of fit_click_prior).
        self.clicked_hit_logits: list[float] = []
        self.page_url = ""

    def observe(self, clicked: Candidate | None, url: str, html: str) -> None:
        self.page_url = url

    def _features(self, anchors: list[Candidate]) -> tuple[torch.Tensor, torch.Tensor]:
        # One call for both texts of every anchor: each call streams the encoder's weights through the cache, and
        # a page's new texts are few (menus repeat).
        vectors = self.encoder.encode([a.text for a in anchors] + [path_words(a.url) for a in anchors])
        texts = np.concatenate([vectors[:len(anchors)], vectors[len(anchors):]], axis=1)
        return torch.from_numpy(texts), torch.from_numpy(np.stack([tag_bag(a.tag_path) for a in anchors]))

    def _add_page(self, anchors: list[Candidate]) -> None:
        page = _Page([a.url for a in anchors], *self._features(anchors))
        if self.learning and self.anchor_boxes is not None:
            targets = self.anchor_boxes.targets(self.page_url, page.urls)
            page.box_targets = torch.from_numpy(targets) if targets is not None else None
        self.pages.append(page)
        for position, anchor in enumerate(anchors):
            self.seen_at[anchor.url] = (len(self.pages) - 1, position)

    def _logits(self, frontier: list[Candidate]) -> torch.Tensor:
        for page in self.pages:
            if page.logits is None:
                # Within an episode the weights do not change: each page is read once (with its graph while
                # learning, which the episode's clicks share).
                with torch.set_grad_enabled(self.learning):
                    features = self.net.features(page.texts, page.bags)
                    page.logits = self.net.policy_head(features).squeeze(1)
                    page.hit_logits = self.net.hit_head(features).squeeze(1)
                    if page.box_targets is not None:
                        page.boxes = self.net.box_head(features)
        where = [self.seen_at[c.url] for c in frontier]
        return (torch.stack([self.pages[page].logits[position] for page, position in where]),
                torch.stack([self.pages[page].hit_logits[position] for page, position in where]))

    def choose(self, on_page: list[Candidate], frontier: list[Candidate]) -> Candidate | None:
        if on_page:
            self._add_page(on_page)
        if not frontier:
            return None
        logits, hit_logits = self._logits(frontier)
        if self.learning:
            best, stop = int(torch.argmax(logits.detach())), None
            self.best_scores.append(float(torch.sigmoid(logits.detach()[best])))
        else:
            best, best_score, state, stop = pick(logits.detach(), hit_logits.detach(), frontier,
                                                 len(self.best_scores), self.eta, self.stopper)
            self.best_scores.append(best_score)
            self.stop_states.append(state)
        if stop is not None:
            return None
        index = self.rng.randrange(len(frontier)) if self.learning and self.rng.random() < self.epsilon else best
        if self.learning:
            self.clicks.append(Click(torch.log_softmax(logits, dim=0)[index], logits[index], hit_logits[index]))
        self.clicked_hit_logits.append(float(hit_logits[index].detach()))
        self.last_hit_score = prior_of_click(self.clicked_hit_logits[-1], self.click_prior)
        return frontier[index]

    def box_loss(self) -> torch.Tensor | None:
        """The auxiliary task's loss over this episode's rendered pages (mean squared error), if any."""
        pages = [page for page in self.pages if page.boxes is not None]
        if not pages:
            return None
        return torch.cat([(page.boxes - page.box_targets).pow(2).mean(dim=1) for page in pages]).mean()

    def scores(self, anchors: list[Candidate]) -> tuple[np.ndarray, np.ndarray]:
        """π(a) and h(a) for one page's anchors in document order (batched inference, no episode state)."""
        way, hit = self.logits(anchors)
        return torch.sigmoid(torch.from_numpy(way)).numpy(), torch.sigmoid(torch.from_numpy(hit)).numpy()

    def logits(self, anchors: list[Candidate]) -> tuple[np.ndarray, np.ndarray]:
        """The logits of π(a) and h(a) for one page's anchors in document order — the values `choose` compares
        (the stream keeps them in the episode's state and picks with `stored_choice`)."""
        return self.logits_of_pages([anchors])[0]

    def logits_of_pages(self, pages: Sequence[list[Candidate]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """`logits` of each page, the pages read together (a batch of the discovery stage): one text-encoder
        call and one pass of the net for all — per page, each a few small operations, it was the time a page
        took once its texts were known."""
        none = np.zeros(0, dtype=np.float32)
        lengths = [len(anchors) for anchors in pages if anchors]
        if not lengths:
            return [(none, none) for _ in pages]
        with torch.inference_mode():
            way, hit = self.net(*self._features([a for anchors in pages for a in anchors]), lengths)
        ways, hits = iter(torch.split(way, lengths)), iter(torch.split(hit, lengths))
        return [(next(ways).numpy(), next(hits).numpy()) if anchors else (none, none) for anchors in pages]

    def save(self, path: Path) -> None:
        shape = self.net.shape
        torch.save({"format_version": FORMAT_VERSION, "encoder": self.encoder.name, "eta": self.eta,
                    "shape": [shape.text_dim, shape.anchor_hidden, shape.tag_hidden, shape.joint_hidden],
                    "tags": list(TAGS), "trained_on": self.trained_on, "finetuned_on": self.finetuned_on,
                    "stopper": self.stopper.to_dict() if self.stopper else None,
                    "click_prior": list(self.click_prior) if self.click_prior else None,
                    "state": self.net.state_dict()},
                   path)

    @classmethod
    def load(cls, path: Path) -> RLCrawler:
        saved = load_checked(path, "discovery agent", FORMAT_VERSION, tags=list(TAGS))
        net = PolicyNet(AgentShape(*saved["shape"]))
        net.load_state_dict(saved["state"])
        stopper = StoppingModel.from_dict(saved["stopper"]) if saved.get("stopper") else None
        # An agent saved before its clicks' prior was recalibrated has none: h as the net gives it.
        calibration = tuple(saved["click_prior"]) if saved.get("click_prior") else None
        return cls(net.eval(), get_encoder(saved["encoder"]), saved["eta"], trained_on=saved["trained_on"],
                   finetuned_on=saved["finetuned_on"], stopper=stopper, click_prior=calibration)


def new_agent(encoder_name: str = "use", seed: int = 0) -> RLCrawler:
    """An untrained agent, its weights drawn from `seed`."""
    encoder = get_encoder(encoder_name)
    torch.manual_seed(seed)
    return RLCrawler(PolicyNet(AgentShape(encoder.dim)), encoder)
