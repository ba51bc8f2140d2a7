"""`sourcewatch serve`, `sourcewatch simweb` and `sourcewatch serve-sites`: web servers until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, print_json


def serve_until_stopped(server, announce) -> int:
    """Start a server (`start()` → what it serves), announce it on stdout, and serve until Ctrl-C/SIGTERM."""

    async def serve() -> None:
        announce(await server.start())
        sys.stdout.flush()
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


class Simweb(Command):
    name = "simweb"
    help = "serve the simulated web on 127.0.0.1 until stopped"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--sites", type=int, default=20)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--speed", type=float, default=3600.0, help="simulated seconds per real second")
        parser.add_argument("--internet", action="store_true",
                            help="grow it into an internet: sites are organisations of types (only some publish "
                                 "events/news) linking to each other, with directories, hubs and a spam farm")
        add_json(parser, "print one JSON object {control, sites: {name: homepage}} once serving")

    def run(self, args: argparse.Namespace) -> int:
        from infra.simweb.server import SimWeb

        web = SimWeb(args.sites, args.seed, args.speed, get_settings().data / "revisit", internet=args.internet)

        def announce(homepages: dict[str, str]) -> None:
            if args.json:
                print_json({"control": web.control_url, "sites": homepages})
            else:
                print(f"{len(homepages)} sites; truth at {web.control_url}/__truth__; "
                      f"first: {next(iter(homepages.values()))}")

        return serve_until_stopped(web, announce)


class ServeSites(Command):
    name = "serve-sites"
    help = "serve site snapshots on 127.0.0.1 until stopped"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("dirs", nargs="+", metavar="DIR", help="a site folder, or a folder of site folders")
        add_json(parser, "print one JSON object {site: homepage URL} once every site answers")

    def run(self, args: argparse.Namespace) -> int:
        from infra.site_server import SiteServer, find_sites

        try:
            sites = find_sites([Path(path) for path in args.dirs])
        except FileNotFoundError as error:
            raise CommandError(str(error)) from None

        def announce(homepages: dict[str, str]) -> None:
            if args.json:
                print_json(homepages)
            else:
                for name, url in homepages.items():
                    print(f"{name}\t{url}")

        return serve_until_stopped(SiteServer(sites), announce)


class Serve(Command):
    name = "serve"
    help = "serve the dashboard, data API, feeds and Prometheus metrics until stopped"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--host", help="address to bind (default: SOURCEWATCH_SERVE_HOST, 127.0.0.1); "
                                           "anything but loopback needs SOURCEWATCH_API_TOKEN")
        parser.add_argument("--port", type=int, help="first port to try (default: SOURCEWATCH_SERVE_PORT, 8066)")
        add_json(parser, "print one JSON object {url, token_file} once serving")

    def run(self, args: argparse.Namespace) -> int:
        from infra.api_access import TOKEN_FILE, settings_token
        from service.app import Service

        settings = get_settings()
        token = settings_token(settings)  # created on first use
        service = Service(settings, args.host, args.port)

        def announce(url: str) -> None:
            if args.json:
                print_json({"url": url, "token_file": str(settings.home / TOKEN_FILE)})
            else:
                # As Jupyter does: the owner's terminal gets a link that logs the browser in (a cookie).
                print(f"sourcewatch is served at {url} until Ctrl-C\n  dashboard: {url}?token={token}\n"
                      f"  API: {url}api/v1/openapi.json (Authorization: Bearer TOKEN; the token is in "
                      f"{settings.home / TOKEN_FILE})\n  feeds: {url}feeds/items.atom?token=TOKEN")

        try:
            return serve_until_stopped(service, announce)
        except (ValueError, FileNotFoundError) as error:
            raise CommandError(str(error)) from None
