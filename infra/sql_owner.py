"""Who holds an embedded chDB directory, so that readers ask that process instead of opening it.

The owner writes `<dir>/owner.json` with its pid and web port; a reader finds a
live owner there and sends its query over HTTP, or opens the directory itself.
"""

from __future__ import annotations

import json
import os

from infra.clickhouse import chdb_path
from infra.processes import pid_alive

OWNER_FILE = "owner.json"


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


def claim_chdb(dsn: str, pid: int, web_port: int) -> None:
    """Record this process as the directory's owner; ChdbBusy when another live process holds it."""
    path = chdb_path(dsn)
    if path is None:
        return
    holder = chdb_owner(dsn)
    if holder is not None:
        raise ChdbBusy(f"{path} is held by process {holder['pid']}: stop it, or point SOURCEWATCH_CLICKHOUSE_DSN elsewhere")
    path.mkdir(parents=True, exist_ok=True)
    (path / OWNER_FILE).write_text(json.dumps({"pid": pid, "web_port": web_port}))


def release_chdb(dsn: str, pid: int) -> None:
    path = chdb_path(dsn)
    if path is None:
        return
    owner_file = path / OWNER_FILE
    try:
        if json.loads(owner_file.read_text()).get("pid") == pid:
            owner_file.unlink()
    except (FileNotFoundError, ValueError):
        pass


def query_clickhouse(dsn: str, sql: str) -> tuple[list[str], list[list]]:
    """Run a query on ClickHouse, through the worker that holds an embedded chDB if one does."""
    import urllib.error
    import urllib.request

    from infra.clickhouse import ClickHouse

    owner = chdb_owner(dsn)
    if owner is not None:
        request = urllib.request.Request(
            f"http://127.0.0.1:{owner['web_port']}/sql/", data=json.dumps({"query": sql}).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise RuntimeError(json.loads(error.read()).get("error", str(error))) from None
        return answer["columns"], answer["rows"]
    clickhouse = ClickHouse(dsn)
    try:
        clickhouse.migrate()
        return clickhouse.query(sql)
    finally:
        clickhouse.close()
