"""DWDBRM's ranking of found pages against a domain's samples: five text rankers and PageRank, combined.

Each ranker orders the candidate pages by how like the samples they are:
- `nb`: multinomial naive Bayes on word counts, the samples against the candidates (unlabelled, taken as
  negatives — the positive-unlabelled setting the method works in), as log odds per word of the page;
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

from collections.abc import Sequence

import numpy as np

PAGERANK_WEIGHT = 0.2
TEXT_RANKERS = ("nb", "lr", "oneclass", "cosine", "jaccard")
RANKERS = (*TEXT_RANKERS, "pagerank")
# Words of the vocabulary at most (the most frequent): bounded memory on a large index.
MAX_FEATURES = 50_000


def positions(scores: np.ndarray) -> np.ndarray:
    """1-based positions by descending score, ties sharing their mean position."""
    from scipy.stats import rankdata

    return rankdata(-scores, method="average")


def text_scores(samples: Sequence[str], candidates: Sequence[str]) -> dict[str, np.ndarray]:
    """Each text ranker's score of every candidate (higher: more like the samples)."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.svm import OneClassSVM

    counts = CountVectorizer(max_features=MAX_FEATURES, min_df=1, token_pattern=r"(?u)\b[^\W\d_]{2,}\b")
    matrix = counts.fit_transform([*samples, *candidates])
    tfidf = TfidfTransformer(sublinear_tf=True).fit_transform(matrix)
    k = len(samples)
    sample_counts, candidate_counts = matrix[:k], matrix[k:]
    sample_tfidf, candidate_tfidf = tfidf[:k], tfidf[k:]
    labels = np.r_[np.ones(k), np.zeros(candidate_counts.shape[0])]
    nb = MultinomialNB().fit(matrix, labels)
    # Its log odds per word of the page: summed, most words of any page lean to the big class and a page of
    # three words would come first.
    word_odds = nb.feature_log_prob_[1] - nb.feature_log_prob_[0]
    words = np.maximum(np.asarray(candidate_counts.sum(axis=1)).ravel(), 1)
    lr = LogisticRegression(class_weight="balanced", max_iter=1000).fit(tfidf, labels)
    oneclass = OneClassSVM(kernel="linear", nu=0.5).fit(sample_tfidf)
    centroid = np.asarray(sample_tfidf.mean(axis=0))
    norm = np.linalg.norm(centroid)
    binary_samples = (sample_counts > 0).astype(np.float64)
    binary = (candidate_counts > 0).astype(np.float64)
    overlap = (binary @ binary_samples.T).toarray()
    union = np.asarray(binary.sum(axis=1)) + np.asarray(binary_samples.sum(axis=1)).T - overlap
    return {
        "nb": (candidate_counts @ word_odds).ravel() / words,
        "lr": lr.decision_function(candidate_tfidf),
        "oneclass": oneclass.decision_function(candidate_tfidf),
        "cosine": np.asarray(candidate_tfidf @ centroid.T).ravel() / norm if norm else np.zeros(len(candidates)),
        "jaccard": np.where(union > 0, overlap / np.maximum(union, 1), 0.0).mean(axis=1),
    }


def pagerank_scores(urls: Sequence[str], edges: Sequence[tuple[str, str]]) -> np.ndarray:
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(urls)
    graph.add_edges_from((a, b) for a, b in edges if a != b)
    ranks = nx.pagerank(graph, alpha=0.85)
    return np.array([ranks.get(url, 0.0) for url in urls])


def rank_candidates(samples: Sequence[str], candidates: Sequence[str], urls: Sequence[str],
                    edges: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
    """Every ranker's positions of the candidates (texts, with their URLs for the link graph), and CombinedF's
    (`combined`)."""
    by_ranker = {name: positions(scores) for name, scores in text_scores(samples, candidates).items()}
    by_ranker["pagerank"] = positions(pagerank_scores(urls, edges))
    mean_text = np.mean([by_ranker[name] for name in TEXT_RANKERS], axis=0)
    by_ranker["combined"] = positions(-((1 - PAGERANK_WEIGHT) * mean_text + PAGERANK_WEIGHT * by_ranker["pagerank"]))
    return by_ranker
