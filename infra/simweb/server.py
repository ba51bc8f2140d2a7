"""`sourcewatch simweb`: the simulated web on 127.0.0.1, one port per site, plus a control port.

A simulated clock (`speed` simulated seconds per real second) decides which
items each source page shows; Last-Modified and ETag follow the content. The
control port serves `/__truth__` (every site's source pages, listing pages and
items with publication times: for evaluation only, never for crawlers),
`/__clock__` (GET to read, POST {"advance_hours": H} to jump forward or {"speed": S} to change speed), and
`/__faults__` (GET to read, POST to set faults globally or per site), `/__visits__` (per site, how crawlers
treated it: requests, most in flight at once, the shortest gap between two, requests before a Retry-After had
passed), and `/__served__` (each source page's last serves: the real time and the simulated time of each).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from html import escape
from pathlib import Path
from urllib.parse import parse_qs

from aiohttp import web

from infra.simweb import render
from infra.simweb.generator import Item, SiteSpec, SourceSpec, generate_web

# The simulated clock starts here (a Monday morning), so weekly and daily patterns line up.
SIM_START = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
STATIC_MODIFIED = SIM_START - timedelta(days=30)
# What a 429/503 fault's Retry-After asks for (real seconds).
RETRY_AFTER_SECONDS = 1
# A request arriving this soon after a Retry-After went out was already under way when it was sent.
IN_FLIGHT_GRACE_SECONDS = 0.1
# Serves of a source page remembered for `/__served__`: the demo's two reads lie a handful of revisits apart,
# and a 5,000-site soak's web keeps 5,000 of these.
SERVES_KEPT = 64


class SimClock:
    """Simulated time: `speed` simulated seconds per real second from its start; at speed 0 it stands still
    (evaluations whose pages must not depend on how fast the machine runs them)."""

    def __init__(self, speed: float, start: datetime = SIM_START) -> None:
        if speed < 0:
            raise ValueError("the speed must not be negative")
        self.speed = speed
        self.start = start
        self._began = time.monotonic()

        self._advanced = 0.0

    def hours(self) -> float:
        """Simulated hours since the start."""
        return (time.monotonic() - self._began) * self.speed / 3600 + self._advanced

    def advance(self, hours: float) -> None:
        """Jump the clock forward (tests and demos that need the next item now, not in real time)."""
        if hours < 0:
            raise ValueError("the clock only moves forward")
        self._advanced += hours

    def set_speed(self, speed: float) -> None:
        """Run on at another speed from now (the demo watches its pages for weeks in minutes)."""
        if speed <= 0:
            raise ValueError("the speed must be positive")
        self._advanced, self._began, self.speed = self.hours(), time.monotonic(), speed

    def now(self) -> datetime:
        return self.start + timedelta(hours=self.hours())


@dataclass(frozen=True)
class Faults:
    latency_ms: int = 0
    hang: bool = False  # never answer (the client's time-out fires)
    status: int = 0  # 429 or 503 …
    status_rate: float = 1.0  # … for this share of requests
    redirect_loop: bool = False
    traps: bool = False  # an infinite calendar and session-id links on every page
    broken_encoding: bool = False  # Big5 bytes under a UTF-8 declaration
    huge: bool = False  # pages padded to 8 MB


@dataclass
class FaultBoard:
    everywhere: Faults = field(default_factory=Faults)
    by_site: dict[str, Faults] = field(default_factory=dict)

    def for_site(self, name: str) -> Faults:
        return self.by_site.get(name, self.everywhere)

    def update(self, changes: dict) -> None:
        """{"*": {...}} sets the global faults, {"site-0003": {...}} one site's; {} clears."""
        for target, values in changes.items():
            faults = Faults(**values)
            if target == "*":
                self.everywhere = faults
            else:
                self.by_site[target] = faults


@dataclass
class Visits:
    """How crawlers treated one site, seen by the server: the politeness a crawler claims, measured where it
    counts."""

    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    # The shortest time between two requests' arrivals (real seconds; None before the second).
    min_gap_s: float | None = None
    # Requests that came before the last Retry-After had passed (and too long after it was sent to have been
    # under way already).
    before_retry_after: int = 0
    _last_start: float = 0.0
    _told_at: float = 0.0
    _retry_at: float = 0.0

    def arrive(self) -> None:
        now = time.monotonic()
        if self.requests:
            gap = now - self._last_start
            self.min_gap_s = gap if self.min_gap_s is None else min(self.min_gap_s, gap)
        self.before_retry_after += self._told_at + IN_FLIGHT_GRACE_SECONDS < now < self._retry_at
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self._last_start = now

    def told_to_retry_after(self, seconds: float) -> None:
        self._told_at = time.monotonic()
        self._retry_at = self._told_at + seconds

    def figures(self) -> dict:
        return {"requests": self.requests, "max_in_flight": self.max_in_flight,
                "min_gap_s": None if self.min_gap_s is None else round(self.min_gap_s, 6),
                "before_retry_after": self.before_retry_after}


class SimSite:
    """Answers one site's requests at the current simulated time."""

    def __init__(self, spec: SiteSpec, clock: SimClock, faults: FaultBoard,
                 neighbours: Sequence[SimSite] = ()) -> None:
        self.spec = spec
        self.clock = clock
        self.faults = faults
        # Every site of the web, by index: where the spec's links to other sites go.
        self.neighbours = neighbours
        self.origin = ""
        self.visits = Visits()
        # Source page path → (real epoch seconds, simulated hours) of its last serves: what a page showed is
        # decided when it is served, which a loaded crawler stamps only later (at speed 3600 a second's lag
        # is a simulated hour).
        self.served: dict[str, deque[tuple[float, float]]] = {
            source.path: deque(maxlen=SERVES_KEPT) for source in spec.sources}

    # -- content -----------------------------------------------------------------------------------

    def visible(self, source: SourceSpec) -> list[Item]:
        now = self.clock.hours()
        return sorted((item for item in source.items if item.hours <= now), key=lambda i: i.hours, reverse=True)

    def menu_entries(self) -> list[tuple[str, str]]:
        words = self.spec.words
        entries = [(words.home, "/"), (words.about, "/about/"), (words.products, "/products/"),
                   (words.services, "/services/"), (words.blog, "/blog/"), (words.staff, "/staff/"),
                   (words.misleading[self.spec.index % len(words.misleading)], "/rental/")]
        for source in self.spec.sources:
            label = getattr(words, source.kind) if source.clicks == 1 else f"{words.about} · {source.clicks}"
            entries.append((label, source.hubs[0] if source.hubs else source.path))
        entries.append((words.contact, "/contact/"))
        return entries

    def _page(self, title: str, body: str) -> str:
        # Every other organisation shows its partners on every page (a footer block), the rest on the
        # homepage alone.
        if self.spec.links and self.spec.index % 2 == 0 and title != self.spec.words.home:
            body += render.partners(self.spec, self._linked())
        return render.document(self.spec, title, body, self.menu_entries())

    def _static(self, path: str) -> str | None:
        spec, words = self.spec, self.spec.words
        home, about = f"<p>{words.body}</p>", f"<p>{words.body}</p>"
        if spec.organisation:
            home = render.organisation_home(spec, self._linked())
            about = f"<p>{escape(render.organisation_words(spec).about)}</p>" + about
        simple = {
            "/": (words.home, home),
            "/about/": (words.about, about),
            "/contact/": (words.contact, "<p>mail: info@example.invalid</p>"),
            "/rental/": (words.misleading[spec.index % len(words.misleading)], f"<p>{words.body}</p>"),
            "/staff/": (words.staff, "<table class='staff'>" + "".join(
                f"<tr><td>{n}</td><td>staff-{n}@example.invalid</td></tr>" for n in range(spec.staff)) + "</table>"),
            "/products/": (words.products, "<ul class='products'>" + "".join(
                f"<li><a href='/products/p-{n}.html'>{words.products} {n}</a></li>" for n in range(spec.products))
                + "</ul>"),
            "/services/": (words.services, "<ul>" + "".join(
                f"<li><a href='/services/s-{n}.html'>{words.services} {n}</a></li>" for n in range(spec.services))
                + "</ul>"),
            "/blog/": (words.blog, "<div class='blog'>" + "".join(
                f"<div class='entry'><a href='/blog/post-{n}.html'>{words.blog} #{n}</a></div>"
                for n in range(spec.blog_posts)) + "</div>"),
        }
        if path in simple:
            return self._page(*simple[path])
        for prefix, count, label in (("/products/p-", spec.products, words.products),
                                     ("/services/s-", spec.services, words.services),
                                     ("/blog/post-", spec.blog_posts, words.blog)):
            if path.startswith(prefix) and path.endswith(".html"):
                number = path[len(prefix):-5]
                if number.isdigit() and int(number) < count:
                    return self._page(f"{label} {number}", f"<p>{words.body}</p>")
        for source in spec.sources:
            if path in source.hubs:
                level = source.hubs.index(path)
                target = source.hubs[level + 1] if level + 1 < len(source.hubs) else source.path
                label = getattr(words, source.kind) if target == source.path else f"{words.more} ›"
                return self._page(f"{words.about} {level + 1}", f"<p>{words.body}</p><a href='{target}'>{label}</a>")
        return None

    def _linked(self) -> list[tuple[SiteSpec, str]]:
        """The sites this one links to, with their origins."""
        return [(self.neighbours[index].spec, self.neighbours[index].origin) for index in self.spec.links]

    def listing_page(self, source: SourceSpec, path: str, query: dict[str, list[str]]) -> tuple[int, int] | None:
        """(page number, page size) when path+query is a listing page of this source."""
        size = source.page_size
        if source.pagination == "page_size" and query.get("size", [""])[0] in ("10", "20", "50"):
            size = int(query["size"][0])
        if path == source.path:
            if source.pagination == "load_more" and "offset" in query:
                offset = query["offset"][0]
                return (int(offset) // size + 1, size) if offset.isdigit() and int(offset) % size == 0 else None
            key = {"next_only": "p"}.get(source.pagination, "page")
            value = query.get(key, ["1"])[0]
            return (int(value), size) if value.isdigit() and int(value) >= 1 else None
        if source.pagination == "numbered_path" and path.startswith(f"{source.path}page/"):
            number = path[len(source.path) + 5:].strip("/")
            return (int(number), size) if number.isdigit() and int(number) >= 2 else None
        return None

    def pages_of(self, source: SourceSpec, size: int | None = None) -> int:
        return max(1, math.ceil(len(self.visible(source)) / (size or source.page_size)))

    def respond(self, path: str, query: dict[str, list[str]]) -> tuple[int, str, datetime]:
        """(status, HTML, last modified)."""
        static = self._static(path)
        if static is not None:
            return 200, static, STATIC_MODIFIED
        for source in self.spec.sources:
            found = self.listing_page(source, path, query)
            if found is not None:
                number, size = found
                visible = self.visible(source)
                pages = self.pages_of(source, size)
                if number > pages:
                    return 404, self._page("404", ""), STATIC_MODIFIED
                shown = visible[(number - 1) * size:number * size]
                body = render.listing(self.spec, source, shown, number, pages, size, self.clock.start)
                title = getattr(self.spec.words, source.kind)
                modified = render.sim_time(self.clock.start, visible[0].hours) if visible else STATIC_MODIFIED
                return 200, self._page(title, body), modified
            if path.startswith(source.path + "item-") and path.endswith(".html"):
                number = path[len(source.path) + 5:-5]
                if number.isdigit() and 1 <= int(number) <= len(source.items):
                    item = source.items[int(number) - 1]
                    if item.hours <= self.clock.hours():
                        body = render.detail(self.spec, source, item, self.clock.start)
                        return 200, self._page(item.title, body), render.sim_time(self.clock.start, item.hours)
        return 404, self._page("404", "<p>not found</p>"), STATIC_MODIFIED

    # -- HTTP --------------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.visits.arrive()
        try:
            return await self._answer(request)
        finally:
            self.visits.in_flight -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        faults = self.faults.for_site(self.spec.name)
        if faults.latency_ms:
            await asyncio.sleep(faults.latency_ms / 1000)
        if faults.hang:
            # Never answer, until the client gives up (then the request is no longer in flight).
            deadline = time.monotonic() + 3600
            while time.monotonic() < deadline and request.transport is not None and not request.transport.is_closing():
                await asyncio.sleep(0.1)
            return web.Response(status=504)
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nDisallow: /private/\n")
        if faults.status and _hash_share(request.path_qs) < faults.status_rate:
            self.visits.told_to_retry_after(RETRY_AFTER_SECONDS)
            return web.Response(status=faults.status, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
        if faults.redirect_loop:
            target = "/loop-b/" if request.path == "/loop-a/" else "/loop-a/"
            return web.Response(status=302, headers={"Location": target})
        query = parse_qs(request.query_string)
        if faults.traps and request.path == "/calendar/":
            month = int(query.get("month", ["0"])[0] or 0)
            body = self._page("Calendar", f"<a href='/calendar/?month={month + 1}'>›</a>")
            return web.Response(text=body, content_type="text/html")
        status, html, modified = self.respond(request.path, query)
        if status == 200 and request.path in self.served and not request.query_string:
            self.served[request.path].append((time.time(), self.clock.hours()))
        if faults.traps:
            sid = hashlib.md5(f"{time.monotonic()}".encode()).hexdigest()[:12]
            html = html.replace("</body>", f"<a href='/calendar/?month=0'>cal</a><a href='/?sid={sid}'>home</a></body>")
        etag = '"' + hashlib.sha1(html.encode()).hexdigest()[:16] + '"'
        headers = {"ETag": etag, "Last-Modified": format_datetime(modified, usegmt=True)}
        if status == 200 and request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers=headers)
        if faults.huge:
            html = html.replace("</body>", "<p>" + "x" * (8 * 1024 * 1024) + "</p></body>")
        if faults.broken_encoding:
            body = html.encode("big5", errors="replace")
            return web.Response(body=body, status=status, headers={**headers, "Content-Type": "text/html; charset=utf-8"})
        return web.Response(text=html, status=status, content_type="text/html", headers=headers)

    # -- truth -------------------------------------------------------------------------------------

    def truth(self, origin: str) -> dict:
        sources = []
        for source in self.spec.sources:
            pages = self.pages_of(source)
            sources.append({
                "url": origin + source.path,
                "kind": source.kind,
                "clicks": source.clicks,
                "pagination_style": source.pagination,
                "page_size": source.page_size,
                "pages": [origin + render.page_url(source, n) for n in range(1, pages + 1)],
                "series": source.series.origin,
                "items": [{"url": origin + render.item_path(source, item), "title": item.title,
                           "published_at": render.sim_time(self.clock.start, item.hours).isoformat(),
                           "visible": item.hours <= self.clock.hours()} for item in source.items],
            })
        internet = {"organisation": self.spec.organisation,
                    "links": [other + "/" for _, other in self._linked()]} if self.spec.organisation else {}
        return {"homepage": origin + "/", "language": self.spec.lang, "template": self.spec.template,
                "nav_style": self.spec.nav_style, "pages": self.spec.page_count, "source_pages": sources} | internet


def _hash_share(text: str) -> float:
    """A stable pseudo-random share in [0, 1) for a request, so fault rates are reproducible."""
    return int(hashlib.md5(text.encode()).hexdigest()[:8], 16) / 2**32


class SimWeb:
    """Every simulated site on its own loopback port, and the control app."""

    def __init__(self, sites: int, seed: int, speed: float = 3600.0, revisit_dir: Path | None = None,
                 host: str = "127.0.0.1", internet: bool = False) -> None:
        self.clock = SimClock(speed)
        self.faults = FaultBoard()
        self.specs = generate_web(sites, seed, revisit_dir, self.clock.start, internet)
        self.sites: list[SimSite] = []
        self.sites += [SimSite(spec, self.clock, self.faults, self.sites) for spec in self.specs]
        self.host = host
        self._runners: list[web.AppRunner] = []
        self.control_url = ""

    async def _serve(self, app: web.Application) -> str:
        # A short shutdown grace: a "hang" fault keeps handlers asleep that should not delay stopping.
        # Handlers cancelled when their client disconnects: a hung request the crawler gave up on leaves the
        # site's in-flight count when its connection closes, not at the hang's next look at its transport —
        # which a loaded server takes long enough for the crawler's next request to arrive first and be
        # counted as a third one in flight.
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0,
                               handler_cancellation=True)
        await runner.setup()
        await web.TCPSite(runner, self.host, 0, backlog=512).start()
        self._runners.append(runner)
        return f"http://{self.host}:{runner.addresses[-1][1]}"

    async def start(self) -> dict[str, str]:
        """Start serving; site name → homepage URL."""
        homepages = {}
        for site in self.sites:
            app = web.Application()
            app.router.add_route("GET", "/{tail:.*}", site.handle)
            site.origin = await self._serve(app)
            homepages[site.spec.name] = site.origin + "/"
        control = web.Application()
        control.router.add_get("/__truth__", self._truth)
        control.router.add_get("/__clock__", self._clock)
        control.router.add_post("/__clock__", self._advance_clock)
        control.router.add_get("/__faults__", self._get_faults)
        control.router.add_get("/__visits__", self._visits)
        control.router.add_get("/__served__", self._served)
        control.router.add_post("/__faults__", self._set_faults)
        self.control_url = await self._serve(control)
        return homepages

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()

    async def _truth(self, request: web.Request) -> web.Response:
        return web.json_response({site.spec.name: site.truth(site.origin) for site in self.sites})

    async def _clock(self, request: web.Request) -> web.Response:
        return web.json_response({"now": self.clock.now().isoformat(), "hours": self.clock.hours(),
                                  "speed": self.clock.speed})

    async def _advance_clock(self, request: web.Request) -> web.Response:
        """POST {"advance_hours": H}: move the simulated clock H hours forward; {"speed": S}: run on at S
        simulated seconds per real second."""
        try:
            body = await request.json()
            if "speed" in body:
                self.clock.set_speed(float(body["speed"]))
            else:
                self.clock.advance(float(body["advance_hours"]))
        except (TypeError, ValueError, KeyError) as error:
            return web.json_response({"error": f"expected {{\"advance_hours\": H ≥ 0}} or {{\"speed\": S > 0}}: "
                                               f"{error}"}, status=400)
        return await self._clock(request)

    async def _visits(self, request: web.Request) -> web.Response:
        return web.json_response({site.spec.name: site.visits.figures() for site in self.sites})

    async def _served(self, request: web.Request) -> web.Response:
        start = self.clock.start
        return web.json_response({site.origin + path: [(real, render.sim_time(start, hours).isoformat())
                                                       for real, hours in serves]
                                  for site in self.sites for path, serves in site.served.items()})

    async def _get_faults(self, request: web.Request) -> web.Response:
        return web.json_response({"*": asdict(self.faults.everywhere),
                                  **{name: asdict(f) for name, f in self.faults.by_site.items()}})

    async def _set_faults(self, request: web.Request) -> web.Response:
        try:
            self.faults.update(await request.json())
        except (TypeError, ValueError) as error:
            return web.json_response({"error": str(error)}, status=400)
        return await self._get_faults(request)

