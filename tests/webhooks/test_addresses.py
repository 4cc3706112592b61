"""Where webhooks may go (SSRF): http(s) only, public addresses only unless WEBHOOKS_ALLOW_PRIVATE."""

import pytest
from django.core.exceptions import ValidationError

from webhooks import addresses


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/hook", "http://localhost:8000/", "http://10.1.2.3/", "http://192.168.0.10/",
    "http://172.16.5.4/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/", "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://100.64.0.1/", "http://224.0.0.1/",
    "http://[fc00::1]/", "https://2130706433/",
])
def test_private_loopback_and_link_local_addresses_are_refused(settings, url):
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    with pytest.raises(ValidationError) as caught:
        addresses.check_url(url)
    assert "not a public address" in caught.value.message_dict["url"][0]


@pytest.mark.parametrize("url", ["ftp://example.com/", "file:///etc/passwd", "gopher://1.1.1.1/", "javascript:x",
                                 "//1.1.1.1/", "1.1.1.1/hook"])
def test_other_schemes_are_refused(url):
    with pytest.raises(ValidationError) as caught:
        addresses.check_url(url)
    assert caught.value.message_dict["url"] == ["Only http and https URLs are allowed."]


def test_credentials_in_the_url_are_refused():
    with pytest.raises(ValidationError, match="Credentials"):
        addresses.check_url("https://user:pass@1.1.1.1/")


def test_a_public_address_is_accepted_and_kept_for_the_connection(settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    target = addresses.resolve("https://1.1.1.1:8443/in?x=1")
    assert target == addresses.Target(scheme="https", host="1.1.1.1", port=8443, path="/in?x=1", address="1.1.1.1")


def test_a_host_is_checked_by_every_address_it_resolves_to(settings, monkeypatch):
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    answers = [(2, 1, 6, "", ("93.184.215.14", 443)), (2, 1, 6, "", ("10.0.0.7", 443))]
    monkeypatch.setattr(addresses.socket, "getaddrinfo", lambda *args, **kwargs: answers)
    with pytest.raises(addresses.Refused, match="10.0.0.7"):
        addresses.resolve("https://hooks.example.com/")


def test_the_setting_lets_loopback_through_but_never_unspecified_or_multicast(settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = True
    assert addresses.resolve("http://127.0.0.1:9/").address == "127.0.0.1"
    for url in ("http://0.0.0.0/", "http://224.0.0.1/"):
        with pytest.raises(addresses.Refused):
            addresses.resolve(url)


def test_an_unresolvable_host_is_refused(monkeypatch):
    def fail(*args, **kwargs):
        raise addresses.socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(addresses.socket, "getaddrinfo", fail)
    with pytest.raises(addresses.Refused, match="cannot be resolved"):
        addresses.resolve("https://nowhere.invalid/")
