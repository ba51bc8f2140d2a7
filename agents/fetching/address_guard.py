"""The SSRF guard: refuse every target that is not a globally routable unicast address.

Checked twice: on literal IP hosts before connecting (every redirect hop, the
robots.txt fetch's included), and on every address a host name resolves to, at
connect time (a resolver wrapper), so a DNS answer that points into the local
network is refused even when it changes between checks. Redirects are followed
by hand, so every hop passes the same checks.

The special ranges are spelled out (IANA's special-purpose registries) rather
than read from `ipaddress`'s flags, whose meaning changes between Python
versions (3.11 calls 100.64.0.0/10 neither private nor global). Loopback and the
private ranges — RFC 1918, shared address space (RFC 6598) and unique-local IPv6
— are allowed only by their settings; every other special range never is.
IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by that
address.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from typing import Any

from aiohttp.abc import AbstractResolver
from aiohttp.resolver import DefaultResolver

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

LOOPBACK = (_V4("127.0.0.0/8"), _V6("::1/128"))
PRIVATE = (
    _V4("10.0.0.0/8"), _V4("172.16.0.0/12"), _V4("192.168.0.0/16"),
    _V4("100.64.0.0/10"),  # shared address space (carrier-grade NAT); 100.100.100.200 is a cloud metadata address
    _V6("fc00::/7"),
)
# Never fetched, whatever the settings: (network, what it is).
NEVER: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = (
    (_V4("0.0.0.0/8"), "'this network'"),
    (_V4("169.254.0.0/16"), "link-local (cloud metadata)"),
    (_V4("192.0.0.0/24"), "IETF protocol assignments"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("192.88.99.0/24"), "6to4 relay anycast"),
    (_V4("198.18.0.0/15"), "benchmarking"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("240.0.0.0/4"), "reserved or broadcast"),
    (_V6("::/128"), "unspecified"),
    (_V6("64:ff9b:1::/48"), "local-use NAT64"),
    (_V6("100::/64"), "discard-only"),
    (_V6("2001::/23"), "IETF protocol assignments (Teredo among them)"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),
    (_V6("fe80::/10"), "link-local"),
    (_V6("fec0::/10"), "site-local"),
    (_V6("ff00::/8"), "multicast"),
)
# IPv6 unicast outside 2000::/3 is not allocated for the public internet (the forms above that embed IPv4 aside).
GLOBAL_UNICAST_V6 = _V6("2000::/3")
NAT64 = _V6("64:ff9b::/96")
# Dotted IPv4 in the legacy forms inet_aton accepts (decimal 2130706433, hex 0x7f.1, octal 0177.0.0.1, 127.1).
LEGACY_IPV4 = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$", re.IGNORECASE)


class BlockedAddress(Exception):
    """A target address the settings do not allow."""


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, NAT64 or 6to4), if any."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a URL host spells as a literal — IPv6 in brackets, with a zone, or IPv4 in any form
    a resolver accepts (decimal, hex, octal, shortened) — or None for a name."""
    host = host.strip().strip("[]").split("%", 1)[0].rstrip(".")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if LEGACY_IPV4.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


class AddressPolicy:
    def __init__(self, allow_loopback: bool = False, allow_private: bool = False) -> None:
        self.allow_loopback = allow_loopback
        self.allow_private = allow_private

    def refusal(self, address: IPAddress) -> str | None:
        """Why the settings refuse this address, or None when they allow it."""
        carried = embedded_ipv4(address)
        if carried is not None:
            reason = self.refusal(carried)
            return f"it carries {carried}: {reason}" if reason else None
        if any(address in network for network in LOOPBACK):
            return None if self.allow_loopback else "a loopback address"
        if any(address in network for network in PRIVATE):
            return None if self.allow_private else "a private or shared (not globally routable) address"
        for network, what in NEVER:
            if address in network:
                return f"a {what} address ({network})"
        if isinstance(address, ipaddress.IPv6Address) and address not in GLOBAL_UNICAST_V6:
            return "outside IPv6 global unicast (2000::/3)"
        return None

    def check_ip(self, ip: str) -> None:
        """Raise BlockedAddress unless the settings allow fetching from this address."""
        address = parse_ip_literal(ip)
        if address is None:
            raise BlockedAddress(f"{ip!r} is not an IP address")
        reason = self.refusal(address)
        if reason is not None:
            raise BlockedAddress(f"{ip} is refused: {reason}")

    def check_host(self, host: str) -> None:
        """Check a URL host when it is an IP literal in any spelling (names are checked when resolved)."""
        if parse_ip_literal(host) is not None:
            self.check_ip(host)
        elif host.rstrip(".").lower() == "localhost" or host.rstrip(".").lower().endswith(".localhost"):
            self.check_ip("127.0.0.1")


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that drops to BlockedAddress when any answer is not allowed."""

    def __init__(self, policy: AddressPolicy, inner: AbstractResolver | None = None) -> None:
        self._policy = policy
        self._inner = inner or DefaultResolver()

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[dict[str, Any]]:
        answers = await self._inner.resolve(host, port, family)
        for answer in answers:
            try:
                self._policy.check_ip(answer["host"])
            except BlockedAddress as blocked:
                raise BlockedAddress(f"{host} resolves to {blocked}") from None
        return answers

    async def close(self) -> None:
        await self._inner.close()
