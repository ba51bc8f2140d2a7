"""`python -m tests.integration.failing_worker worker …`: the real worker with one fault injected — the
extract_links stage raises on any page whose URL holds FAULT_MARK, as a bug meeting an unforeseen page would."""

from __future__ import annotations

import sys

import agents.extract_links as stage
from streams.cli import main

FAULT_MARK = "/raise-here"
_links_of = stage.links_of


def _failing_links_of(page):
    if FAULT_MARK in page.url:
        raise RuntimeError(f"injected fault on {page.url}")
    return _links_of(page)


stage.links_of = _failing_links_of

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
