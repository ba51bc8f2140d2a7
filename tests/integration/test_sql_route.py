"""The worker's `/sql/` route against the attacks a hostile probe tried: no token, a foreign Origin or Host
(CSRF, DNS rebinding), a form post, writes, DDL and table functions that reach files or the network. Each
gets a 4xx and changes nothing; `sourcewatch sql` keeps working for its user (real worker, real chDB)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from infra.api_access import TOKEN_FILE
from tests.conftest import ROOT, cli_json, make_pipeline_env

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def worker(kafka_bootstrap, tmp_path_factory):
    """A running worker with its own chDB, home (so its own generated token) and web port."""
    tmp = tmp_path_factory.mktemp("sql-route")
    env = make_pipeline_env(kafka_bootstrap, tmp) | {"SOURCEWATCH_HOME": str(tmp / "home")}
    process = subprocess.Popen([sys.executable, "-m", "streams.cli", "worker"], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    owner_file = tmp / "clickhouse" / "owner.json"
    deadline = time.monotonic() + 120
    while not owner_file.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.3)
    assert owner_file.exists(), process.communicate(timeout=30)[0][-3000:]
    port = json.loads(owner_file.read_text())["web_port"]
    token = (tmp / "home" / TOKEN_FILE).read_text().strip()
    yield env, port, token, tmp
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output[-3000:]


def _post(port: int, body: bytes, headers: dict[str, str], wait: float = 60) -> tuple[int, dict]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/sql/", data=body, headers=headers, method="POST")
    deadline = time.monotonic() + wait
    while True:
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())
        except (urllib.error.URLError, ConnectionError):  # the web server is still starting
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _query(port: int, token: str, sql: str, **headers: str) -> tuple[int, dict]:
    return _post(port, json.dumps({"query": sql}).encode(),
                 {"Content-Type": "application/json", "Authorization": f"Bearer {token}"} | headers)


def test_the_token_is_generated_owner_only(worker):
    _, _, token, tmp = worker
    assert len(token) >= 32
    assert (tmp / "home" / TOKEN_FILE).stat().st_mode & 0o777 == 0o600


def test_a_query_with_the_token_is_answered(worker):
    _, port, token, _ = worker
    assert _query(port, token, "SELECT count() AS n FROM fetches") == (200, {"columns": ["n"], "rows": [[0]]})


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "application/json"}, 401),  # no token
        ({"Content-Type": "application/json", "Authorization": "Bearer wrong"}, 401),
        ({"Content-Type": "application/json", "Authorization": "Basic {token}"}, 401),
        ({"Content-Type": "application/json", "Authorization": "Bearer {token}", "Origin": "https://evil.example"}, 403),
        ({"Content-Type": "application/json", "Authorization": "Bearer {token}", "Origin": "null"}, 403),
        ({"Content-Type": "application/json", "Authorization": "Bearer {token}", "Host": "evil.example:{port}"}, 403),
        ({"Content-Type": "text/plain", "Authorization": "Bearer {token}"}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Bearer {token}"}, 415),
    ],
)
def test_requests_without_the_token_from_a_foreign_origin_or_host_or_not_json_are_refused(worker, headers, status):
    _, port, token, _ = worker
    headers = {name: value.format(token=token, port=port) for name, value in headers.items()}
    code, answer = _post(port, json.dumps({"query": "SELECT 1"}).encode(), headers)
    assert code == status, answer
    assert "error" in answer and "rows" not in answer


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM file('/etc/passwd', 'LineAsString')",
        "INSERT INTO FUNCTION file('{tmp}/written.csv', 'CSV') SELECT 1",
        "INSERT INTO FUNCTION file('user_scripts/x.sh', 'LineAsString') SELECT 'id'",
        "SELECT * FROM url('http://127.0.0.1:{port}/sql/', 'LineAsString')",
        "SELECT * FROM executable('id', 'TSV', 'x String')",
        "INSERT INTO fetches_store (event_id, url) VALUES ('forged', 'https://forged.example/')",
        "CREATE TABLE forged (x UInt8) ENGINE = Memory",
        "DROP TABLE fetches_store",
        "ALTER TABLE fetches_store DELETE WHERE 1",
        "SELECT 1 SETTINGS readonly = 0",
        "SET readonly = 0",
    ],
)
def test_writes_ddl_and_file_or_network_functions_are_refused_and_change_nothing(worker, sql):
    _, port, token, tmp = worker
    code, answer = _query(port, token, sql.format(tmp=tmp, port=port))
    assert code == 400 and "readonly" in answer["error"].lower(), answer
    assert not (tmp / "written.csv").exists()
    assert _query(port, token, "SELECT count() FROM fetches_store")[1]["rows"] == [[0]]
    tables = _query(port, token, "SELECT name FROM system.tables WHERE database = currentDatabase() "
                                 "AND name IN ('fetches_store', 'forged')")[1]["rows"]
    assert tables == [["fetches_store"]]


def test_the_cli_still_queries_through_the_worker(worker):
    env, _, _, _ = worker
    assert cli_json(["sql", "SELECT 41 + 1 AS answer"], env) == [{"answer": 42}]


def _get(port: int, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_the_worker_serves_the_services_routes_from_its_own_chdb_with_the_token(worker):
    _, port, token, _ = worker
    bearer = {"Authorization": f"Bearer {token}"}
    code, page = _get(port, "/", bearer)
    assert code == 200 and b"<html" in page.lower()  # the dashboard, not Faust's placeholder index
    code, body = _get(port, "/api/v1/sources?limit=5", bearer)
    assert code == 200 and json.loads(body)["sources"] == []
    code, body = _get(port, "/api/v1/items?limit=5", bearer)
    assert code == 200 and json.loads(body)["items"] == []
    assert _get(port, "/metrics", bearer)[0] == 200
    assert _get(port, "/feeds/items.atom", bearer)[0] == 200
    # The same access rule as `sourcewatch serve`: no token, or a foreign Origin, is refused.
    assert _get(port, "/api/v1/sources", {})[0] == 401
    assert _get(port, "/api/v1/items", bearer | {"Origin": "https://evil.example"})[0] == 403
    assert _get(port, "/healthz", {})[0] == 200
