"""The batched Viterbi decoder gives torchcrf's paths: on random CRFs and batches of ragged lengths, and with
the shipped tagger on every labelled pagination page."""

from __future__ import annotations

import pytest
import torch
from torchcrf import CRF

from models.pagination.data import load_pages
from models.pagination.tagger import PREDICT_BATCH, features_of, load_tagger
from models.pagination.viterbi import best_paths


def _decoded_both_ways(crf: CRF, emissions: torch.Tensor, mask: torch.Tensor) -> tuple[list, list]:
    with torch.inference_mode():
        ours = best_paths(emissions, mask, crf.start_transitions, crf.transitions, crf.end_transitions)
        theirs = crf.decode(emissions, mask=mask)
    return ours, theirs


@pytest.mark.parametrize("seed", range(20))
def test_random_crfs_and_ragged_batches(seed):
    generator = torch.Generator().manual_seed(seed)
    tags = 2 + seed % 4
    crf = CRF(tags, batch_first=True)
    with torch.no_grad():
        for parameter in crf.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 2)
    lengths = torch.randint(1, 60, (1 + seed % 7,), generator=generator)
    emissions = torch.randn(len(lengths), int(lengths.max()), tags, generator=generator) * 3
    mask = torch.arange(int(lengths.max()))[None] < lengths[:, None]
    ours, theirs = _decoded_both_ways(crf, emissions, mask)
    assert ours == theirs
    assert [len(path) for path in ours] == lengths.tolist()


def test_the_shipped_tagger_on_every_labelled_page(data_dir):
    model = load_tagger()
    pages = load_pages(data_dir / "pagination" / "prnsm") + load_pages(data_dir / "pagination" / "autopager")
    features = [f for f in (features_of(page.html, page.url) for page in pages) if f]
    features.sort(key=len)
    model.eval()
    compared = 0
    for start in range(0, len(features), PREDICT_BATCH):
        with torch.inference_mode():
            emissions, mask = model._emissions(features[start:start + PREDICT_BATCH])
        ours, theirs = _decoded_both_ways(model.crf, emissions, mask)
        assert ours == theirs
        compared += len(ours)
    assert compared > 300
