"""What every command shares: the Command base class, the one error path, and small helpers.

A command is a class with a name, a one-line help, `add_options(parser)` and
`run(args) -> exit code` (Scrapy's `commands/`); a group (`train`, `eval`,
`bench`) holds one sub-command per task, each with only its own flags, so a
flag that does not apply is refused by the parser. Anything that stops a
command raises CommandError; `main` prints it as `error: …` and exits with its
code (2 for a usage error unless it says otherwise).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from infra.settings import get_settings


class CommandError(Exception):
    """Stops a command: printed as `error: MESSAGE`, exit code `code`."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class Command:
    name = ""
    help = ""
    # Sub-commands of a group (`train pagination`); empty for a plain command.
    subcommands: tuple[type[Command], ...] = ()
    # It trains or evaluates the small models (the discovery agent, the source-page classifier, the revisit model):
    # run torch and numpy's BLAS on one thread each (streams.threads).
    small_models = False

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        """Add this command's flags."""

    def run(self, args: argparse.Namespace) -> int:
        raise NotImplementedError

    def register(self, commands: argparse._SubParsersAction) -> None:
        parser = commands.add_parser(self.name, help=self.help, description=self.help)
        if self.subcommands:
            tasks = parser.add_subparsers(dest="task", required=True, metavar="TASK")
            for sub in self.subcommands:
                sub().register(tasks)
            return
        self.add_options(parser)
        parser.set_defaults(command=self)


def add_json(parser: argparse.ArgumentParser, what: str = "print the result as JSON") -> None:
    parser.add_argument("--json", action="store_true", help=what)


def add_allow_loopback(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-loopback", action="store_true",
                        help="allow fetching 127.0.0.0/8 and ::1 (local servers, site snapshots) — in the worker "
                             "this command starts; running workers fetch with their own settings")


def print_json(value: object) -> None:
    print(json.dumps(value, ensure_ascii=False, default=str))


def ensure_local_kafka() -> None:
    from infra.kafka_broker import ensure_local_broker

    ensure_local_broker(get_settings())


def read_seeds(values: list[str]) -> list[str]:
    """URLs as given, with every argument that names a file replaced by its lines (# comments skipped)."""
    seeds: list[str] = []
    for value in values:
        path = Path(value)
        if "://" not in value and path.is_file():
            seeds.extend(line.strip() for line in path.read_text().splitlines()
                         if line.strip() and not line.startswith("#"))
        else:
            seeds.append(value)
    return seeds


def existing_files(paths: list[str], what: str) -> list[Path]:
    """The paths as Paths, or CommandError naming those that are not files."""
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        raise CommandError(f"no such {what}: {', '.join(missing)}")
    return [Path(path) for path in paths]


def loopback_crawl_settings() -> None:
    """Our own loopback servers need no politeness delay; set before the settings are first read."""
    os.environ.setdefault("SOURCEWATCH_PER_HOST_DELAY_SECONDS", "0")
    os.environ.setdefault("SOURCEWATCH_PER_HOST_CONCURRENCY", "8")
    os.environ["SOURCEWATCH_ALLOW_LOOPBACK"] = "true"
    get_settings.cache_clear()


def interactive(args: argparse.Namespace) -> bool:
    """Progress bars go to a terminal, and never into --json output."""
    return not getattr(args, "json", False) and sys.stderr.isatty()


@contextlib.contextmanager
def progress_bar(what: str, total: int):
    """A progress bar on stderr (when it is a terminal); yields advance(note) for each step done."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), disable=not sys.stderr.isatty(), transient=True) as bar:
        task = bar.add_task("", total=total)
        yield lambda note="": bar.update(task, advance=1, description=note)


def note(line: str) -> None:
    """A progress line on stderr."""
    print(f"  {line}", file=sys.stderr)
