"""DWDBRM's ranking of found pages against a domain's samples: five text rankers and PageRank, combined.

The text rankers read only the domain's words: those in the samples of several of their sites (a quarter of
them, two at least). A word only one sample's site shows is its site's — its menu, its footer, its name —
and, read, it put that site's every page (homepage, item pages, pager pages) above other sites' source
pages; the words sites of the domain share ("meetings", "agenda", the date tokens) are what tells a page of
the domain. Each ranker orders the candidate pages by how like the samples they are:
- `nb`: multinomial naive Bayes on TF-IDF, the samples against the candidates (unlabelled, taken as
  negatives — the positive-unlabelled setting the method works in), as the log odds of the two classes;
- `lr`: logistic regression on TF-IDF, the same classes, balanced;
- `oneclass`: a one-class SVM fitted on the samples alone (TF-IDF, linear kernel);
- `cosine`: the TF-IDF cosine to the samples' centroid;
- `jaccard`: the mean Jaccard overlap of the page's word set with each sample's;
- `pagerank`: PageRank over the link graph among the indexed pages (networkx).
CombinedF (Eq. 11): (1 − α) · the mean of a page's positions under the five text rankers + α · its position
under PageRank, α = 0.2; the lowest comes first. Positions are 1-based, ties share the mean position.
All from scikit-learn and networkx: nothing fitted beforehand, everything from the samples in hand.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

log = logging.getLogger(__name__)
PAGERANK_WEIGHT = 0.2
TEXT_RANKERS = ("nb", "lr", "oneclass", "cosine", "jaccard")
RANKERS = (*TEXT_RANKERS, "pagerank")
# Words of the vocabulary at most (the most frequent): bounded memory on a large index.
MAX_FEATURES = 50_000
# A word is the domain's when the samples of this share of their sites show it (two sites at least). Fewer
# shared words than this say the samples share no language, only a template (two sites of the simulated
# internet in two languages share 7: "site", "example", their URLs' words): every word is read then.
SHARED_BY_SITES = 0.25
MIN_SHARED_WORDS = 20
TOKEN_PATTERN = r"(?u)\b[^\W\d_]{2,}\b"


def positions(scores: np.ndarray) -> np.ndarray:
    """1-based positions by descending score, ties sharing their mean position."""
    from scipy.stats import rankdata

    return rankdata(-scores, method="average")


@cache
def _words() -> Callable[[str], list[str]]:
    """A text's words as the rankers' vectorizer reads them (lower-cased, TOKEN_PATTERN)."""
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(token_pattern=TOKEN_PATTERN).build_analyzer()


def domain_vocabulary(samples: Sequence[str], sample_sites: Sequence[str]) -> list[str] | None:
    """The words in the samples of at least SHARED_BY_SITES of their sites (two at least); None — every word
    read — where the samples come from one site or share fewer than MIN_SHARED_WORDS words across sites
    (logged: their own sites' words then weigh in)."""
    sites_by_word: dict[str, set[str]] = defaultdict(set)
    for text, site in zip(samples, sample_sites, strict=True):
        for word in set(_words()(text)):
            sites_by_word[word].add(site)
    sites = len(set(sample_sites))
    if sites < 2:
        log.info("the samples come from one site: every word of theirs is read, their site's own too")
        return None
    needed = max(2, math.ceil(SHARED_BY_SITES * sites))
    shared = sorted(word for word, seen in sites_by_word.items() if len(seen) >= needed)
    if len(shared) < MIN_SHARED_WORDS:
        log.info("the samples' %d sites share %d words, no language: every word of theirs is read", sites,
                 len(shared))
        return None
    return shared


def text_scores(samples: Sequence[str], candidates: Sequence[str],
                vocabulary: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Each text ranker's score of every candidate (higher: more like the samples), reading the `vocabulary`'s
    words (None: every word)."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.svm import OneClassSVM

    counts = CountVectorizer(max_features=None if vocabulary else MAX_FEATURES, vocabulary=vocabulary,
                             token_pattern=TOKEN_PATTERN)
    matrix = counts.fit_transform([*samples, *candidates])
    tfidf = TfidfTransformer(sublinear_tf=True).fit_transform(matrix)
    k = len(samples)
    sample_counts, candidate_counts = matrix[:k], matrix[k:]
    sample_tfidf, candidate_tfidf = tfidf[:k], tfidf[k:]
    labels = np.r_[np.ones(k), np.zeros(candidate_counts.shape[0])]
    # On TF-IDF rows (unit length) a page's length does not decide its odds.
    nb = MultinomialNB().fit(tfidf, labels)
    log_likelihood = nb.predict_joint_log_proba(candidate_tfidf)
    lr = LogisticRegression(class_weight="balanced", max_iter=1000).fit(tfidf, labels)
    oneclass = OneClassSVM(kernel="linear", nu=0.5).fit(sample_tfidf)
    centroid = np.asarray(sample_tfidf.mean(axis=0))
    norm = np.linalg.norm(centroid)
    binary_samples = (sample_counts > 0).astype(np.float64)
    binary = (candidate_counts > 0).astype(np.float64)
    overlap = (binary @ binary_samples.T).toarray()
    union = np.asarray(binary.sum(axis=1)) + np.asarray(binary_samples.sum(axis=1)).T - overlap
    # A page without a word of the vocabulary is like the samples in nothing: last under every ranker (naive
    # Bayes would give it the classes' prior odds, above pages whose words the negatives share).
    unlike = np.asarray(candidate_counts.sum(axis=1)).ravel() == 0
    scores = {
        "nb": log_likelihood[:, 1] - log_likelihood[:, 0],
        "lr": lr.decision_function(candidate_tfidf),
        "oneclass": oneclass.decision_function(candidate_tfidf),
        "cosine": np.asarray(candidate_tfidf @ centroid.T).ravel() / norm if norm else np.zeros(len(candidates)),
        "jaccard": np.where(union > 0, overlap / np.maximum(union, 1), 0.0).mean(axis=1),
    }
    return {name: np.where(unlike, -np.inf, values) for name, values in scores.items()}


def pagerank_scores(urls: Sequence[str], edges: Sequence[tuple[str, str]]) -> np.ndarray:
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(urls)
    graph.add_edges_from((a, b) for a, b in edges if a != b)
    ranks = nx.pagerank(graph, alpha=0.85)
    return np.array([ranks.get(url, 0.0) for url in urls])


def rank_candidates(samples: Sequence[str], sample_sites: Sequence[str], candidates: Sequence[str],
                    urls: Sequence[str], edges: Sequence[tuple[str, str]],
                    site_pages: Sequence[str] = ()) -> dict[str, np.ndarray]:
    """Every ranker's positions of the candidates (texts, with their URLs for the link graph), and CombinedF's
    (`combined`); the samples' texts with their sites. `site_pages`: pages of the samples' own sites read as
    samples too, every word of theirs read — what kind of organisation the samples' sites are is in their
    homepages' own words, which no other sample need share (another language's sites)."""
    vocabulary = domain_vocabulary(samples, sample_sites)
    if vocabulary is not None and site_pages:
        vocabulary = sorted(set(vocabulary).union(*map(_words(), site_pages)))
    scores = text_scores([*samples, *site_pages], candidates, vocabulary)
    by_ranker = {name: positions(values) for name, values in scores.items()}
    by_ranker["pagerank"] = positions(pagerank_scores(urls, edges))
    mean_text = np.mean([by_ranker[name] for name in TEXT_RANKERS], axis=0)
    by_ranker["combined"] = positions(-((1 - PAGERANK_WEIGHT) * mean_text + PAGERANK_WEIGHT * by_ranker["pagerank"]))
    return by_ranker
