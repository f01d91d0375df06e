"""Which addresses a fetch may reach, however the URL spells them."""

from __future__ import annotations

import ipaddress

import pytest

from toolwire.web import RefusedError, allowed, literal_address, refusal
from toolwire.web.resolve import target

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://2130706433/", "loopback"),
        ("http://0x7f.1/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://127.1/", "loopback"),
        ("http://0x7f000001/", "loopback"),
        ("http://127.0.0.1./", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback, inside an IPv6 address"),
        ("http://[::ffff:7f00:1]/", "loopback, inside an IPv6 address"),
        ("http://[::127.0.0.1]/", "loopback, inside an IPv6 address"),
        ("http://[64:ff9b::a00:1]/", "private, inside an IPv6 address"),
        ("http://[2002:c0a8:101::1]/", "private, inside an IPv6 address"),
        ("http://10.1.2.3/", "private"),
        ("http://172.16.0.1/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://100.64.0.1/", "CGNAT"),
        ("http://0.0.0.0/", "0.0.0.0/8"),
        ("http://0/", "0.0.0.0/8"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[ff02::1]/", "multicast"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fd12:3456::1]/", "unique-local"),
        ("http://240.0.0.1/", "reserved"),
        ("http://[2001:db8::1]/", "documentation"),
    ],
)
async def test_refused_spellings(url: str, why: str) -> None:
    with pytest.raises(RefusedError, match="Refused") as info:
        await target(url, {}, ())
    assert why in str(info.value)


@pytest.mark.parametrize(
    "url", ["http://1.2.3.999/", "http://1.2.3.4.5/", "http://[fe80::1%25eth0]/"]
)
async def test_hosts_that_look_numeric_but_are_not_are_refused(url: str) -> None:
    with pytest.raises(RefusedError):
        await target(url, {}, ())


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://93.184.215.14/", "93.184.215.14"),
        ("https://[2606:4700::6810:84e5]:8443/x", "2606:4700::6810:84e5"),
        ("http://0x5d.0xb8.0xd7.0x0e/", "93.184.215.14"),
    ],
)
async def test_public_addresses_are_dialled_as_given(url: str, address: str) -> None:
    hop = await target(url, {}, ())
    assert hop.address == ipaddress.ip_address(address)


async def test_a_pin_is_vetted_and_used_instead_of_dns() -> None:
    pins = {"docs.corp": "10.0.0.7", "public.test": "93.184.215.14"}
    with pytest.raises(RefusedError, match=r"10\.0\.0\.7 \(private\)"):
        await target("http://docs.corp/", pins, ())
    assert str((await target("http://public.test/", pins, ())).address) == "93.184.215.14"
    assert str((await target("http://docs.corp/a", pins, ("docs.corp",))).address) == "10.0.0.7"


@pytest.mark.parametrize(
    ("host", "port", "patterns", "expected"),
    [
        ("docs.corp", 80, ["docs.corp"], True),
        ("DOCS.corp.", 443, ["docs.corp"], True),
        ("docs.corp", 8080, ["docs.corp:8080"], True),
        ("docs.corp", 80, ["docs.corp:8080"], False),
        ("a.b.corp.example", 80, ["*.corp.example"], True),
        ("corp.example", 80, ["*.corp.example"], False),
        ("evilcorp.example", 80, ["*.corp.example"], False),
        ("docs.corp.evil", 80, ["docs.corp"], False),
        ("::1", 8000, ["[::1]:8000"], True),
    ],
)
def test_allow_patterns(host: str, port: int, patterns: list[str], expected: bool) -> None:
    assert allowed(host, port, patterns) is expected


def test_names_are_not_literals() -> None:
    assert literal_address("example.com") is None
    assert literal_address("1e100.net") is None
    assert refusal(ipaddress.ip_address("8.8.8.8")) is None


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("192.0.0.1", "IETF protocol assignments"),
        ("192.88.99.1", "6to4 relay"),
        ("255.255.255.255", "limited broadcast"),
        ("::ffff:0:7f00:1", "loopback, inside an IPv6 address"),
        ("2001:2::1", "IETF protocol assignments"),
        ("5f00::1", "segment-routing"),
        ("4000::1", "outside 2000::/3"),
    ],
)
def test_the_table_is_toolwires_not_the_interpreters(address: str, why: str) -> None:
    found = refusal(ipaddress.ip_address(address))
    assert found is not None
    assert why in found


@pytest.mark.parametrize(
    "address", ["192.0.0.9", "2001:1::1", "2001:4:112::1", "64:ff9b::808:808", "2002:808:808::1"]
)
def test_what_the_registry_calls_globally_reachable_is_allowed(address: str) -> None:
    assert refusal(ipaddress.ip_address(address)) is None
