import pytest

from agents.fetching.address_guard import AddressPolicy, BlockedAddress


@pytest.mark.parametrize("ip", ["127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.5.5", "169.254.169.254",
                                "::1", "fe80::1", "0.0.0.0", "::ffff:127.0.0.1"])
def test_private_and_local_addresses_are_refused_by_default(ip):
    with pytest.raises(BlockedAddress):
        AddressPolicy().check_ip(ip)


def test_public_addresses_pass():
    AddressPolicy().check_ip("93.184.216.34")
    AddressPolicy().check_host("example.org")  # names are checked when resolved


def test_loopback_only_when_allowed():
    policy = AddressPolicy(allow_loopback=True)
    policy.check_ip("127.0.0.1")
    policy.check_host("localhost")
    with pytest.raises(BlockedAddress):
        policy.check_ip("10.0.0.1")
    with pytest.raises(BlockedAddress):
        policy.check_ip("169.254.169.254")
