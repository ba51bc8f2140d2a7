"""The source-page classifier's inputs: four texts of a page, and the labelled pages of site folders."""

import json

import numpy as np

from models.discovery.classifier import four_texts, labelled_pages, scores, whole_text

LISTING = """<html><head><title>Upcoming events</title></head><body><nav><a href="/">Home</a></nav><main>
<ul>""" + "".join(f'<li><a href="/e/{n}">Meetup {n}</a> <span>March {n}, 2026</span></li>' for n in range(1, 7)) + """</ul>
<ol>""" + "".join(f'<li><a href="/p/{n}">Paper {n}</a></li>' for n in range(1, 4)) + """</ol></main>
<footer>Contact us</footer></body></html>"""


def test_a_page_is_read_as_its_two_largest_regions_its_title_and_its_middle():
    first, second, title, middle = four_texts(LISTING, "https://club.example/events/")
    assert "Meetup 1" in first and "Meetup 6" in first
    assert "Paper 1" in second
    assert title == "Upcoming events"
    assert "Meetup" in middle and "Contact us" not in middle
    assert whole_text(LISTING).startswith("Upcoming events")


def test_labelled_pages_take_every_source_page_and_a_sample_of_the_rest(tmp_path):
    site = tmp_path / "club"
    for path in ("index.html", "events/index.html", *(f"p{n}/index.html" for n in range(40))):
        (site / "site" / path).parent.mkdir(parents=True, exist_ok=True)
        (site / "site" / path).write_text(LISTING)
    (site / "manifest.json").write_text(json.dumps({"source_pages": [{"path": "events/index.html"}]}))
    pages = labelled_pages([tmp_path])
    assert sum(page.source for page in pages) == 1 and len(pages) == 26
    assert [page.path for page in pages if page.source] == ["/events/index.html"]


def test_scores_are_pooled_over_pages():
    predicted = np.array([True, True, False, False])
    labels = np.array([True, False, True, False])
    assert scores(predicted, labels) == {"accuracy": 0.5, "precision": 0.5, "recall": 0.5, "f1": 0.5, "pages": 4,
                                         "source_pages": 2}


def test_train_only_pages_are_never_tested():
    from models.discovery.classifier import TRAIN_ONLY, LabelledPage, cross_validate

    rng = np.random.default_rng(0)
    pages = [LabelledPage(f"site{n % 4}", f"/{n}", "", n % 5 == 0) for n in range(40)]
    pages += [LabelledPage(f"{TRAIN_ONLY}extra", f"/x{n}", "", True) for n in range(10)]
    result = cross_validate(pages, rng.normal(size=(len(pages), 8)), folds=2)
    assert result["pages"] == 40 and result["source_pages"] == 8


def _separable(sites: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Pages of `sites` sites, one source page each, whose first input says which it is (plus noise)."""
    rng = np.random.default_rng(seed)
    labels = np.array([n % 10 == 0 for n in range(10 * sites)])
    vectors = rng.normal(size=(len(labels), 6)).astype(np.float32)
    vectors[:, 0] += 4 * labels
    return vectors, labels, [f"site{n // 10}" for n in range(len(labels))]


def test_the_model_learns_the_evidence_and_chooses_its_regularisation_on_its_own_sites():
    from models.discovery.classifier import DEFAULT_C, REGULARISATION_GRID, train_classifier

    vectors, labels, groups = _separable(sites=12)
    model = train_classifier(vectors, labels, groups)
    assert model.c in REGULARISATION_GRID
    test_vectors, test_labels, _ = _separable(sites=6, seed=1)
    assert scores(model.probability(test_vectors) >= 0.5, test_labels)["f1"] >= 0.9
    # Too few sites with a source page to hold some out: the default strength, said so by the model.
    assert train_classifier(vectors[:30], labels[:30], groups[:30]).c == DEFAULT_C


def test_a_saved_classifier_reads_the_same_probabilities(tmp_path):
    from models.discovery.classifier import SourcePageClassifier, train_classifier
    from models.text_encoders import get_encoder

    vectors, labels, groups = _separable(sites=8)
    classifier = SourcePageClassifier(train_classifier(vectors, labels, groups), get_encoder("use"), 0.4, ["a"])
    classifier.save(tmp_path / "classifier.pt")
    loaded = SourcePageClassifier.load(tmp_path / "classifier.pt")
    assert loaded.threshold == 0.4 and loaded.trained_on == ["a"] and loaded.model.c == classifier.model.c
    np.testing.assert_array_equal(loaded.model.probability(vectors), classifier.model.probability(vectors))
