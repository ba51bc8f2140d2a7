import pytest

from agents.fetching.address_guard import AddressPolicy, BlockedAddress, GuardedResolver, parse_ip_literal

# One address from every special-purpose range that is never globally routable, IPv4 and IPv6, and the
# IPv6 forms that carry a refused IPv4 address.
NEVER_GLOBAL = [
    "0.0.0.0", "0.1.2.3", "169.254.169.254", "169.254.0.1", "192.0.0.8", "192.0.2.1", "192.88.99.1",
    "198.18.0.1", "198.19.255.254", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250",
    "240.0.0.1", "255.255.255.255",
    "::", "fe80::1", "fe80::1%eth0", "fec0::1", "ff02::1", "100::1", "2001::1", "2001:db8::1", "3fff::1",
    "64:ff9b:1::a00:1", "::7f00:1", "::a9fe:a9fe", "4000::1",
    "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1",
]
LOOPBACK = ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1"]
PRIVATE = ["10.1.2.3", "172.16.5.5", "172.31.255.1", "192.168.0.1", "100.64.0.1", "100.100.100.200",
           "100.127.255.254", "fc00::1", "fd12:3456::1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:a00:1::1"]
GLOBAL = ["93.184.216.34", "8.8.8.8", "100.63.255.255", "100.128.0.1", "172.32.0.1", "2606:4700::1111",
          "::ffff:93.184.216.34", "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize("ip", NEVER_GLOBAL + LOOPBACK + PRIVATE)
def test_every_non_global_address_is_refused_by_default(ip):
    with pytest.raises(BlockedAddress):
        AddressPolicy().check_ip(ip)


@pytest.mark.parametrize("ip", NEVER_GLOBAL)
def test_special_ranges_stay_refused_whatever_the_settings(ip):
    with pytest.raises(BlockedAddress):
        AddressPolicy(allow_loopback=True, allow_private=True).check_ip(ip)


@pytest.mark.parametrize("ip", GLOBAL)
def test_global_addresses_pass(ip):
    AddressPolicy().check_ip(ip)


@pytest.mark.parametrize("ip", LOOPBACK)
def test_loopback_only_when_allowed(ip):
    AddressPolicy(allow_loopback=True).check_ip(ip)
    with pytest.raises(BlockedAddress):
        AddressPolicy(allow_private=True).check_ip(ip)


@pytest.mark.parametrize("ip", PRIVATE)
def test_private_and_shared_space_only_when_allowed(ip):
    AddressPolicy(allow_private=True).check_ip(ip)
    with pytest.raises(BlockedAddress):
        AddressPolicy(allow_loopback=True).check_ip(ip)


@pytest.mark.parametrize(
    ("host", "address"),
    [("2130706433", "127.0.0.1"), ("0x7f000001", "127.0.0.1"), ("0x7f.1", "127.0.0.1"),
     ("0177.0.0.1", "127.0.0.1"), ("127.1", "127.0.0.1"), ("167772161", "10.0.0.1"), ("0xa.0.0.1", "10.0.0.1"),
     ("2852039166", "169.254.169.254"), ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"), ("[::1]", "::1"),
     ("[fe80::1%25eth0]", "fe80::1"), ("127.0.0.1.", "127.0.0.1")],
)
def test_ip_literals_in_every_spelling_are_read_and_refused(host, address):
    assert str(parse_ip_literal(host.replace("%25", "%"))) == address
    with pytest.raises(BlockedAddress):
        AddressPolicy().check_host(host.replace("%25", "%"))


@pytest.mark.parametrize("host", ["example.org", "0x7f.example.org", "1.2.3.4.example", "localhost.example.org"])
def test_names_are_left_to_the_resolver(host):
    assert parse_ip_literal(host) is None
    AddressPolicy().check_host(host)


def test_localhost_names_are_loopback():
    for host in ("localhost", "LOCALHOST.", "api.localhost"):
        with pytest.raises(BlockedAddress):
            AddressPolicy().check_host(host)
        AddressPolicy(allow_loopback=True).check_host(host)


class HostsFile:
    """A resolver over fixed answers, as an /etc/hosts would give them (no DNS server runs in tests)."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers

    async def resolve(self, host, port=0, family=0):
        return [{"hostname": host, "host": ip, "port": port, "family": family, "proto": 0, "flags": 0}
                for ip in self.answers[host]]

    async def close(self):
        pass


async def test_a_name_with_one_refused_address_among_several_is_refused():
    resolver = GuardedResolver(AddressPolicy(), HostsFile({
        "good.example": ["93.184.216.34", "2606:4700::1111"],
        "mixed.example": ["93.184.216.34", "10.0.0.7"],
        "sneaky.example": ["2606:4700::1111", "::ffff:169.254.169.254"],
    }))
    assert len(await resolver.resolve("good.example", 80)) == 2
    for host in ("mixed.example", "sneaky.example"):
        with pytest.raises(BlockedAddress, match=host):
            await resolver.resolve(host, 80)
