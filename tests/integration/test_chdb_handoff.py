"""An embedded chDB directory changes hands between a worker and `sourcewatch sql` readers without either
failing on chDB's own lock: each side waits for the other (real chDB, real processes, real HTTP)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from infra.clickhouse import ClickHouse
from infra.sql_owner import LOCK_FILE, claim_chdb, query_clickhouse, release_chdb
from tests.conftest import ROOT, free_port


def _child(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_until_locked(directory: Path, child: subprocess.Popen) -> None:
    """Return once another process holds the directory's lock (a probe that wins releases at once)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        if (directory / LOCK_FILE).exists():
            descriptor = os.open(directory / LOCK_FILE, os.O_RDWR)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            finally:
                os.close(descriptor)
        time.sleep(0.02)
    raise AssertionError(f"the child never locked {directory}: {child.communicate()}")


def test_a_worker_starting_while_a_reader_queries_waits_for_the_query(tmp_path):
    dsn = f"chdb://{tmp_path / 'clickhouse'}"
    reader = _child("from infra.sql_owner import query_clickhouse\n"
                    f"print(query_clickhouse({dsn!r}, 'SELECT sleep(2) + 7', token='t')[1])")
    _wait_until_locked(tmp_path / "clickhouse", reader)

    claim_chdb(dsn, os.getpid(), web_port=0)
    try:
        worker_store = ClickHouse(dsn)  # fails on chDB's lock if the reader still had the directory open
        assert worker_store.query("SELECT 1")[1] == [[1]]
        worker_store.close()
    finally:
        release_chdb(dsn, os.getpid())
    out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    assert out.strip() == "[[7]]"


def test_a_reader_asks_a_worker_that_claimed_the_directory_once_its_web_server_answers(tmp_path):
    dsn, port = f"chdb://{tmp_path / 'clickhouse'}", free_port(17066)
    # A worker's start-up order: claim, open, then (a moment later) its web server.
    worker = _child(f"""
import json, time
from http.server import BaseHTTPRequestHandler, HTTPServer
from infra.clickhouse import ClickHouse
from infra.sql_owner import claim_chdb
import os
claim_chdb({dsn!r}, os.getpid(), {port})
store = ClickHouse({dsn!r})
store.migrate()
time.sleep(1.5)

class Sql(BaseHTTPRequestHandler):
    def do_POST(self):
        query = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["query"]
        columns, rows = store.query(query)
        body = json.dumps({{"columns": columns, "rows": rows}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

HTTPServer(("127.0.0.1", {port}), Sql).handle_request()
""")
    try:
        _wait_until_locked(tmp_path / "clickhouse", worker)
        columns, rows = query_clickhouse(dsn, "SELECT count() AS tables FROM system.tables WHERE name = 'fetches'",
                                         token="t")
        assert (columns, rows) == (["tables"], [[1]])
    finally:
        _, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err
