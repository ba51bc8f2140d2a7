"""`sourcewatch fuzz pages`: generated and mutated pages through every stage that reads one, as the stream runs
them (the agents' pure cores): body decoding, link extraction, pagination tagging, record extraction, an item
page's publication time, the classifier's four texts. A page may read as nothing; it may not raise, and its
time is measured against a budget.

Documents are real pages (a corpus folder, e.g. <data>/sites) mutated the ways hostile or broken web pages
are: truncated, nested thousands deep, in another encoding than declared (Big5, GBK, Shift-JIS) or several at
once, with broken UTF-8, NUL bytes, a giant attribute, tens of thousands of links, shuffled tag soup — and
plain random bytes. Everything is drawn from one seed: document I of seed S is the same on every run, and
`--seed S --start I --documents 1` replays a failure alone.
"""

from __future__ import annotations

import math
import random
import resource
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agents.fetching.fetcher import body_fields
from agents.links import links_of
from agents.pagination import tag_pages
from agents.records import read_records
from infra.settings import Settings
from models.discovery.classifier import four_texts
from models.pagination.tagger import PaginationTagger
from models.records.item_time import published_time
from models.web.dom import parse_html
from schemas.crawl import PageFetched

URL = "https://fuzz.example/events/"
ENCODINGS = ("big5", "gbk", "shift_jis", "euc-kr", "cp1252", "koi8-r", "utf-16")


def _log_uniform(rng: random.Random, low: float, high: float) -> int:
    """Sizes spread over orders of magnitude: most documents moderate, some at the extreme."""
    return int(10 ** rng.uniform(math.log10(low), math.log10(high)))


def _truncated(rng: random.Random, page: bytes) -> bytes:
    return page[: rng.randint(0, len(page))]


def _deeply_nested(rng: random.Random, page: bytes) -> bytes:
    depth = _log_uniform(rng, 100, 60_000)
    return b"<html><body>" + b"<div><a href='/x'>" * depth + page + b"</a></div>" * rng.randint(0, depth)


def _misencoded(rng: random.Random, page: bytes) -> bytes:
    text = page.decode("utf-8", errors="replace")
    encoding, declared = rng.choice(ENCODINGS), rng.choice((*ENCODINGS, "utf-8", "nonsense-charset"))
    head = f'<meta charset="{declared}">'.encode()
    return head + text.encode(encoding, errors="replace")


def _mixed_encodings(rng: random.Random, page: bytes) -> bytes:
    text = page.decode("utf-8", errors="replace")
    cuts = sorted(rng.sample(range(len(text) + 1), min(4, len(text) + 1)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return b"".join(piece.encode(rng.choice(ENCODINGS), errors="replace") for piece in pieces)


def _broken_utf8(rng: random.Random, page: bytes) -> bytes:
    data = bytearray(page)
    for _ in range(rng.randint(1, 200)):
        data.insert(rng.randint(0, len(data)), rng.choice((0xFF, 0xFE, 0xC0, 0x80, 0xED)))
    return bytes(data)


def _nul_bytes(rng: random.Random, page: bytes) -> bytes:
    data = bytearray(page)
    for _ in range(rng.randint(1, 100)):
        position = rng.randint(0, len(data))
        data[position:position] = b"\x00" * rng.randint(1, 50)
    return bytes(data)


def _giant_attribute(rng: random.Random, page: bytes) -> bytes:
    value = b"x" * _log_uniform(rng, 10_000, 4_000_000)
    return page.replace(b"<body", b'<body data-giant="' + value + b'"', 1) if b"<body" in page else \
        b'<div title="' + value + b'">' + page


def _many_links(rng: random.Random, page: bytes) -> bytes:
    links = b"".join(b'<a href="/p/%d?page=%d">%d</a> ' % (i, i, i) for i in range(_log_uniform(rng, 500, 40_000)))
    return page.replace(b"</body>", links + b"</body>", 1) if b"</body>" in page else page + links


def _tag_soup(rng: random.Random, page: bytes) -> bytes:
    pieces = [page[i:i + 64] for i in range(0, len(page), 64)]
    for _ in range(len(pieces) // 4):
        a, b = rng.randrange(len(pieces)), rng.randrange(len(pieces))
        pieces[a], pieces[b] = pieces[b], pieces[a]
    return b"".join(pieces)


def _random_bytes(rng: random.Random, page: bytes) -> bytes:
    return rng.randbytes(_log_uniform(rng, 1, 200_000))


MUTATIONS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "unchanged": lambda rng, page: page, "truncated": _truncated, "deeply nested": _deeply_nested,
    "misencoded": _misencoded, "mixed encodings": _mixed_encodings, "broken UTF-8": _broken_utf8,
    "NUL bytes": _nul_bytes, "giant attribute": _giant_attribute, "many links": _many_links,
    "tag soup": _tag_soup, "random bytes": _random_bytes,
}


def documents(corpus: Sequence[bytes], seed: int, start: int, count: int) -> Iterator[tuple[int, str, bytes]]:
    """(index, mutation, bytes) of documents start … start + count − 1 of this seed; each is drawn from its own
    (seed, index) generator, so one can be made again alone."""
    for index in range(start, start + count):
        rng = random.Random(f"{seed}:{index}")
        kind = rng.choice(sorted(MUTATIONS))
        yield index, kind, MUTATIONS[kind](rng, rng.choice(corpus) if corpus else b"")


def read_document(raw: bytes, tagger: PaginationTagger, max_body_bytes: int,
                  max_message_body_bytes: int) -> tuple[dict[str, float], str]:
    """Every page-reading stage on one body fetched as HTML, capped as the fetch stage caps it: each stage's
    milliseconds, and why the page shows no list ("" where it shows one: models.records.no_list); StageFailed
    (caused by the exception) names the stage that raised."""
    started = time.perf_counter()
    try:
        # The fetcher stops reading at max_body_bytes; the fetch stage caps the body it sends.
        page = PageFetched(site="fuzz.example", crawl_id="fuzz", url=URL, final_url=URL, status=200,
                           content_type="text/html", **body_fields(raw[:max_body_bytes], "text/html"))
        page = page.with_body_capped(max_message_body_bytes)
    except Exception as error:
        raise StageFailed("decoding") from error
    spent = {"decoding": (time.perf_counter() - started) * 1000}
    stages: list[tuple[str, Callable[[], object]]] = [
        ("links", lambda: links_of(page)),
        ("pagination", lambda: tag_pages(tagger, "fuzz", [page])),
        ("records", lambda: read_records(page)),
        ("item time", lambda: published_time(parse_html(page.body), None)),
        ("classifier texts", lambda: four_texts(page.body, URL)),
    ]
    read: dict[str, object] = {}
    for name, stage in stages:
        started = time.perf_counter()
        try:
            read[name] = stage()
        except Exception as error:
            raise StageFailed(name) from error
        spent[name] = (time.perf_counter() - started) * 1000
    return spent, read["records"].extraction.no_list


class StageFailed(Exception):
    """A page-reading stage raised on a fuzzed document."""


@dataclass
class FuzzResult:
    seed: int
    start: int
    documents: int
    by_mutation: dict[str, int] = field(default_factory=dict)
    # Documents that showed no list, by the reason their reading gave (models.records.no_list).
    no_list: dict[str, int] = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)
    # The time one stage may take on one page, and the pages where one took longer.
    budget_ms: float = 0.0
    over_budget: list[dict] = field(default_factory=list)
    # A page's time through every stage.
    ms_p50: float = 0.0
    ms_p99: float = 0.0
    ms_max: float = 0.0
    # Each stage's slowest page.
    slowest_ms: dict[str, float] = field(default_factory=dict)
    # The process's peak resident memory by the end (the corpus and the models included).
    peak_rss_mb: float = 0.0


def load_corpus(folder: Path, limit: int = 500) -> list[bytes]:
    """Up to `limit` HTML files under the folder (sorted, so a seed means the same documents everywhere)."""
    return [path.read_bytes() for path in sorted(folder.rglob("*.htm*"))[:limit]]


def fuzz_pages(corpus: Sequence[bytes], tagger: PaginationTagger, settings: Settings, count: int, seed: int = 0,
               start: int = 0, budget_ms: float = 5_000.0, advance: Callable[[], None] = lambda: None) -> FuzzResult:
    """Run `count` documents of this seed through read_document; every exception and every stage over the
    budget is reported with the document's index and mutation."""
    result = FuzzResult(seed, start, count, budget_ms=budget_ms)
    times = []
    for index, kind, raw in documents(corpus, seed, start, count):
        result.by_mutation[kind] = result.by_mutation.get(kind, 0) + 1
        started = time.perf_counter()
        try:
            spent, no_list = read_document(raw, tagger, settings.max_body_bytes, settings.max_message_body_bytes)
            if no_list:
                result.no_list[no_list] = result.no_list.get(no_list, 0) + 1
        except StageFailed as failed:
            cause = failed.__cause__
            result.failures.append({"index": index, "mutation": kind, "stage": str(failed),
                                    "error": f"{type(cause).__name__}: {cause}"[:500],
                                    "where": traceback.format_tb(cause.__traceback__)[-1].strip()[:500]})
            spent = {}
        times.append((time.perf_counter() - started) * 1000)
        for stage, ms in spent.items():
            result.slowest_ms[stage] = round(max(result.slowest_ms.get(stage, 0.0), ms), 1)
            if ms > budget_ms:
                result.over_budget.append({"index": index, "mutation": kind, "stage": stage, "ms": round(ms),
                                           "bytes": len(raw)})
        advance()
    result.peak_rss_mb = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if times:
        result.ms_p50, result.ms_p99 = (round(float(v), 1) for v in np.percentile(times, [50, 99]))
        result.ms_max = round(max(times), 1)
    return result
