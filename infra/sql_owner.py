"""Who holds an embedded chDB directory, so that readers ask that process instead of opening it.

chDB lets one process open a directory. The worker holds it for its whole run and
writes `<dir>/owner.json` with its pid and web port; a reader (`sourcewatch sql`)
finds a live owner there and sends its query over HTTP, or opens the directory
itself for one query. An exclusive flock on `<dir>/owner.lock`, taken before
opening and released after closing, makes the hand-off safe: a reader that
checked for an owner a moment before a worker started, or a worker starting while
a reader is mid-query, waits for the other instead of failing on chDB's own lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

from infra.api_access import settings_token
from infra.clickhouse import chdb_path
from infra.processes import pid_alive
from infra.queries import Query
from infra.settings import Settings

OWNER_FILE = "owner.json"
LOCK_FILE = "owner.lock"
# How long one side waits for the other: a reader's query, or a worker's start-up or shut-down.
HANDOFF_SECONDS = 60.0
RETRY_SECONDS = 0.2

# The lock descriptors this process holds, by directory; closing one releases its flock.
_held: dict[Path, int] = {}


class ChdbBusy(RuntimeError):
    """Another live process holds the chDB directory."""


def chdb_owner(dsn: str) -> dict | None:
    """{'pid', 'web_port'} of the live process holding the directory, or None."""
    path = chdb_path(dsn)
    if path is None:
        return None
    try:
        owner = json.loads((path / OWNER_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return owner if pid_alive(int(owner.get("pid", 0))) and owner["pid"] != os.getpid() else None


def _try_lock(path: Path) -> int | None:
    """The descriptor of the directory's lock, now held by this process, or None while another holds it."""
    path.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    return descriptor


def claim_chdb(dsn: str, pid: int, web_port: int, wait: float = HANDOFF_SECONDS) -> None:
    """Record this process as the directory's owner, after any reader's query in flight has finished;
    ChdbBusy when another live worker holds it, or when it stays locked for `wait` seconds."""
    path = chdb_path(dsn)
    if path is None:
        return
    deadline = time.monotonic() + wait
    while (descriptor := _try_lock(path)) is None:
        holder = chdb_owner(dsn)
        if holder is not None:
            raise ChdbBusy(f"{path} is held by process {holder['pid']}: stop it, "
                           "or point SOURCEWATCH_CLICKHOUSE_DSN elsewhere")
        if time.monotonic() > deadline:
            raise ChdbBusy(f"{path} stayed locked by another process for {wait:.0f} s (a `sourcewatch sql` "
                           "query still running?)")
        time.sleep(RETRY_SECONDS)
    _held[path] = descriptor
    (path / OWNER_FILE).write_text(json.dumps({"pid": pid, "web_port": web_port}))


def release_chdb(dsn: str, pid: int) -> None:
    """Give the directory up (call after closing the client): readers open it themselves again."""
    path = chdb_path(dsn)
    if path is None:
        return
    owner_file = path / OWNER_FILE
    try:
        if json.loads(owner_file.read_text()).get("pid") == pid:
            owner_file.unlink()
    except (FileNotFoundError, ValueError):
        pass
    descriptor = _held.pop(path, None)
    if descriptor is not None:
        os.close(descriptor)


class _OwnerUnreachable(Exception):
    """The owner's web server did not answer: it is starting or stopping."""


def _ask_owner(owner: dict, sql: str, parameters: dict, token: str) -> tuple[list[str], list[list]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{owner['web_port']}/sql/",
        data=json.dumps({"query": sql, "parameters": parameters}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as error:  # the query's own error, from ClickHouse
        raise RuntimeError(json.loads(error.read()).get("error", str(error))) from None
    except (urllib.error.URLError, ConnectionError) as error:
        raise _OwnerUnreachable(str(error)) from error
    return answer["columns"], answer["rows"]


def _query_directly(dsn: str, sql: str, parameters: dict) -> tuple[list[str], list[list]]:
    from infra.clickhouse import ClickHouse

    clickhouse = ClickHouse(dsn)
    try:
        clickhouse.migrate()
        return clickhouse.query(sql, parameters)
    finally:
        clickhouse.close()


def query_clickhouse(dsn: str, sql: str, token: str, parameters: dict | None = None,
                     wait: float = HANDOFF_SECONDS) -> tuple[list[str], list[list]]:
    """Run a read query on ClickHouse, through the worker that holds an embedded chDB if one does (with the
    API `token`). While a worker starts or stops, or another reader has the directory, it waits up to
    `wait` seconds."""
    parameters = parameters or {}
    path = chdb_path(dsn)
    if path is None:
        return _query_directly(dsn, sql, parameters)
    deadline = time.monotonic() + wait
    while True:
        owner = chdb_owner(dsn)
        if owner is not None:
            try:
                return _ask_owner(owner, sql, parameters, token)
            except _OwnerUnreachable:
                pass
        elif (descriptor := _try_lock(path)) is not None:
            try:
                return _query_directly(dsn, sql, parameters)
            finally:
                os.close(descriptor)
        if time.monotonic() > deadline:
            raise ChdbBusy(f"{path} stayed busy for {wait:.0f} s: its owner "
                           f"{'did not answer' if owner else 'is starting, or another query holds it'}")
        time.sleep(RETRY_SECONDS)


def read_clickhouse(settings: Settings, query: Query | str) -> tuple[list[str], list[list]]:
    """A read query (one of infra.queries, or SQL as a user typed it) on these settings' ClickHouse, with their
    API token."""
    query = query if isinstance(query, Query) else Query(query)
    return query_clickhouse(settings.clickhouse_dsn, query.sql, settings_token(settings), query.parameters)
