"""The SSRF guard: refuse targets on private, loopback, link-local or reserved addresses.

Checked twice: on literal IP hosts before connecting, and on every address a
host name resolves to, at connect time (a resolver wrapper), so a DNS answer
that points into the local network is refused even when it changes between
checks. Redirects are followed by hand, so every hop passes the same checks.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

from aiohttp.abc import AbstractResolver
from aiohttp.resolver import DefaultResolver


class BlockedAddress(Exception):
    """A target address the settings do not allow."""


class AddressPolicy:
    def __init__(self, allow_loopback: bool = False, allow_private: bool = False) -> None:
        self.allow_loopback = allow_loopback
        self.allow_private = allow_private

    def check_ip(self, ip: str) -> None:
        """Raise BlockedAddress unless the settings allow fetching from this address."""
        address = ipaddress.ip_address(ip.split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        if address.is_loopback:
            if self.allow_loopback:
                return
            raise BlockedAddress(f"{ip} is a loopback address")
        if address.is_link_local or address.is_multicast or address.is_unspecified or address.is_reserved:
            raise BlockedAddress(f"{ip} is a link-local, multicast or reserved address")
        if address.is_private and not self.allow_private:
            raise BlockedAddress(f"{ip} is a private address")

    def check_host(self, host: str) -> None:
        """Check a URL host when it is an IP literal (names are checked when resolved)."""
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            if host == "localhost" or host.endswith(".localhost"):
                self.check_ip("127.0.0.1")
            return
        self.check_ip(host.strip("[]"))


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that drops to BlockedAddress when any answer is not allowed."""

    def __init__(self, policy: AddressPolicy) -> None:
        self._policy = policy
        self._inner = DefaultResolver()

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[dict[str, Any]]:
        answers = await self._inner.resolve(host, port, family)
        for answer in answers:
            self._policy.check_ip(answer["host"])
        return answers

    async def close(self) -> None:
        await self._inner.close()
