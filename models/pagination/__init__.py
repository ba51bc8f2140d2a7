"""Pagination: the BiLSTM-CRF tagger of PAGE and NEXT links, its features, data, metrics and evaluation,
and the AutoPager baseline."""
