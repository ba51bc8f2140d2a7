"""Who may call sourcewatch's HTTP routes (the worker's `/sql/` today).

Three checks, each closing one way in: a bearer token (`SOURCEWATCH_API_TOKEN`,
or one generated on first use and kept owner-only in `<home>/api-token`, which
the CLI reads), a Host header naming this machine's loopback or a configured
name (a DNS-rebinding page reaches the port under its own name), and an Origin,
when a browser sends one, of the same hosts (a foreign page's cross-site
request). JSON bodies only, so a plain HTML form cannot post at all.
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from infra.settings import Settings

TOKEN_FILE = "api-token"
WEBHOOK_SECRET_FILE = "webhook-secret"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def stored_secret(home: Path, name: str, configured: str | None = None) -> str:
    """The configured secret, else the one stored in `home/name`, created (0600) when there is none yet."""
    if configured:
        return configured
    path = home / name
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    home.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(32)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process created it first: use theirs
        return path.read_text().strip()
    with os.fdopen(descriptor, "w") as handle:
        handle.write(secret + "\n")
    return secret


def api_token(home: Path, configured: str | None = None) -> str:
    """The configured token, else the one stored under `home`, created (0600) when there is none yet."""
    return stored_secret(home, TOKEN_FILE, configured)


def settings_token(settings: Settings) -> str:
    """The API token of these settings (configured, or stored under their home)."""
    return api_token(settings.home, settings.api_token.get_secret_value() if settings.api_token else None)


def webhook_secret(settings: Settings) -> str:
    """The key webhook posts are signed with (HMAC-SHA256): configured, or stored under the home."""
    configured = settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
    return stored_secret(settings.home, WEBHOOK_SECRET_FILE, configured)


def _host_name(netloc: str) -> str:
    """The host of a Host header or an origin's netloc, without port or IPv6 brackets, lower case."""
    return (urlsplit(f"//{netloc}").hostname or "").rstrip(".")


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str


class AccessRule:
    """The token, hosts and content type a request must carry."""

    def __init__(self, token: str, allowed_hosts: Iterable[str] = ()) -> None:
        if not token:
            raise ValueError("an API token is required")
        self._token = token.encode()
        self.hosts = LOOPBACK_NAMES | {host.lower() for host in allowed_hosts}

    @classmethod
    def from_settings(cls, settings: Settings) -> AccessRule:
        return cls(settings_token(settings), settings.api_allowed_hosts)

    def refusal(self, method: str, headers: Mapping[str, str]) -> Refusal | None:
        """Why a request is refused (HTTP status and reason), or None when it may go on."""
        host = _host_name(headers.get("Host", ""))
        if host not in self.hosts:
            return Refusal(403, f"Host {headers.get('Host', '(none)')!r} is not served here")
        origin = headers.get("Origin")
        if origin is not None and (origin == "null" or _host_name(urlsplit(origin).netloc) not in self.hosts):
            return Refusal(403, f"requests from origin {origin!r} are not accepted")
        scheme, _, presented = headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not presented:
            return Refusal(401, "an `Authorization: Bearer TOKEN` header is required (the token is "
                                "SOURCEWATCH_API_TOKEN, or the file .sourcewatch/api-token)")
        if not hmac.compare_digest(presented.strip().encode(), self._token):
            return Refusal(401, "the API token is not valid")
        media = headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if method.upper() not in ("GET", "HEAD") and media != "application/json":
            return Refusal(415, f"the body must be application/json, not {media or 'untyped'}")
        return None
