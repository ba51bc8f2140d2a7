"""Serve real site snapshots on loopback, one port per site, so crawls of them stay local.

A site folder is `<name>/site/` (the site root) with `<name>/manifest.json`
(`serve_prefix`, `site_hosts`, `homepage`) as in <data>/sites; a plain folder of
HTML is served as a site of its own at `/`. Directory URLs map to index.html;
absolute links to the site's original hosts are rewritten to the loopback
address in every text response, so a crawler following them stays here — in
HTML only in its markup (attributes, scripts, styles), not in the words the
page shows, which stay as the site wrote them.
"""

from __future__ import annotations

import json
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from infra.processes import serve_in_child

REWRITTEN_TYPES = ("text/html", "text/css", "application/javascript", "text/javascript", "application/xml",
                   "text/xml", "application/rss+xml", "application/atom+xml", "application/json")
# An HTML document's markup: tags (with their attributes), comments, and script and style elements whole.
_MARKUP = re.compile(rb"(<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<[^>]*>)",
                     re.DOTALL | re.IGNORECASE)


@dataclass
class SiteFolder:
    name: str
    root: Path
    prefix: str = "/"
    hosts: list[str] = field(default_factory=list)
    homepage: str = ""

    @classmethod
    def load(cls, folder: Path) -> SiteFolder:
        manifest_path = folder / "manifest.json"
        if manifest_path.is_file() and (folder / "site").is_dir():
            manifest = json.loads(manifest_path.read_text())
            prefix = "/" + manifest.get("serve_prefix", "/").strip("/") + "/"
            homepage = manifest.get("homepage", "")
            homepage = "" if homepage in ("index.html", "") else homepage
            return cls(folder.name, folder / "site", prefix.replace("//", "/"), manifest.get("site_hosts", []), homepage)
        return cls(folder.name, folder)


def find_sites(paths: list[Path]) -> list[SiteFolder]:
    """Each path is a site folder, a folder of site folders, or a plain folder of HTML."""
    sites: list[SiteFolder] = []
    for path in paths:
        if not path.is_dir():
            raise FileNotFoundError(f"not a folder: {path}")
        if (path / "manifest.json").is_file() or any(path.glob("*.htm*")):
            sites.append(SiteFolder.load(path))
        else:
            sites.extend(SiteFolder.load(child) for child in sorted(path.iterdir()) if child.is_dir())
    if not sites:
        raise FileNotFoundError(f"no site folders in {', '.join(map(str, paths))}")
    return sites


def host_pattern(hosts: list[str]) -> re.Pattern[bytes] | None:
    """Matches absolute and scheme-relative URLs' origins on any of the hosts, where they start a URL — not inside
    a broken relative link that holds one (`om_oss/https://host/om_oss`, `/post/(https://host/news/)`): a browser
    resolves those against the page, so they keep the host as written, and a port put into their path would make
    the link read differently on every port the site is served on."""
    if not hosts:
        return None
    names = b"|".join(re.escape(host.encode()) for host in sorted(hosts, key=len, reverse=True))
    return re.compile(rb"(?<![\w/.~%:-])(?<!/\()(?:https?:)?//(?:" + names + rb")(?=[/\"'\s?#)<]|$)",
                      re.IGNORECASE)


class SiteApp:
    def __init__(self, site: SiteFolder) -> None:
        self.site = site
        self.root = site.root.resolve()
        self.pattern = host_pattern(site.hosts)
        self.origin = b""

    def _file_for(self, path: str) -> Path | None:
        if not path.startswith(self.site.prefix) and path + "/" != self.site.prefix:
            return None
        relative = path[len(self.site.prefix):] if path.startswith(self.site.prefix) else ""
        target = (self.root / relative).resolve()
        if target != self.root and self.root not in target.parents:
            return None  # path traversal
        return target

    async def handle(self, request: web.Request) -> web.StreamResponse:
        target = self._file_for(request.path)
        if target is None:
            raise web.HTTPNotFound()
        if target.is_dir():
            if not request.path.endswith("/"):
                raise web.HTTPMovedPermanently(request.path + "/")
            target = target / "index.html"
        if not target.is_file():
            raise web.HTTPNotFound()
        content_type, _ = mimetypes.guess_type(target.name)
        content_type = content_type or "application/octet-stream"
        body = target.read_bytes()
        if self.pattern is not None and content_type in REWRITTEN_TYPES:
            body = (rewritten_markup(body, self.pattern, self.origin) if content_type == "text/html"
                    else self.pattern.sub(self.origin, body))
        return web.Response(body=body, content_type=content_type)


def rewritten_markup(body: bytes, pattern: re.Pattern[bytes], origin: bytes) -> bytes:
    """The page with its hosts' links rewritten to `origin` in its markup only. Its shown words keep the host
    the site wrote ("see https://club.example"): a page read from this server says what it says on the web,
    whatever port it is served on. A text that carried the port would move the sentence encoder's vectors of
    the page's other texts too (USE's vector of a text moves at ~2e-7 with the other texts of its batch), and
    with them an evaluation's figures from one run to the next (README, discovery)."""
    parts = _MARKUP.split(body)
    # re.split with one group: text, markup, text, markup, …, text.
    return b"".join(pattern.sub(origin, part) if index % 2 else part for index, part in enumerate(parts))


class SiteServer:
    """Every site on its own loopback port; `start()` returns name → homepage URL."""

    def __init__(self, sites: list[SiteFolder], host: str = "127.0.0.1") -> None:
        self.sites = sites
        self.host = host
        self._runners: list[web.AppRunner] = []

    async def start(self) -> dict[str, str]:
        homepages: dict[str, str] = {}
        for site in self.sites:
            handler = SiteApp(site)
            app = web.Application()
            app.router.add_route("GET", "/{tail:.*}", handler.handle)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            tcp = web.TCPSite(runner, self.host, 0)
            await tcp.start()
            port = runner.addresses[-1][1]
            handler.origin = f"http://{self.host}:{port}".encode()
            self._runners.append(runner)
            homepages[site.name] = f"http://{self.host}:{port}{site.prefix}{site.homepage}"
        return homepages

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()


def serving_sites(dirs: list[Path], env: dict[str, str] | None = None):
    """`sourcewatch serve-sites --json DIR…` in a child process for the duration; yields name → homepage URL."""
    return serve_in_child(["serve-sites", *map(str, dirs)], env)
