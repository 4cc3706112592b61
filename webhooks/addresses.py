"""Where a webhook may be sent (SSRF): http(s) URLs whose host resolves to public addresses only.

Checked when an endpoint is registered or changed (a 400 naming `url`) and again at every delivery after the
host is resolved: the POST then goes to the very address checked (`Target.address`), so a DNS answer that
changes in between (rebinding) cannot point it inside. WEBHOOKS_ALLOW_PRIVATE=1 lets private, loopback and
link-local addresses through (development, tests, receivers on the same network).
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

SCHEMES = ("http", "https")


class Refused(ValueError):
    """The URL may not be sent to; the message says why."""


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (a resolved address), and what the request names (host, path)."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


def _split(url: str):
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Refused(f"Not a valid URL ({exc}).") from None
    if parts.scheme.lower() not in SCHEMES:
        raise Refused("Only http and https URLs are allowed.")
    if not parts.hostname:
        raise Refused("The URL names no host.")
    if parts.username or parts.password:
        raise Refused("Credentials in the URL are not allowed (use the signature to authenticate).")
    return parts, port or (443 if parts.scheme.lower() == "https" else 80)


def refused_address(address: str) -> str | None:
    """Why this IP address may not be sent to, or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone (fe80::1%eth0) names a link-local address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if settings.WEBHOOKS_ALLOW_PRIVATE and not ip.is_multicast and not ip.is_unspecified:
        return None
    if ip.is_global and not ip.is_multicast:
        return None
    return f"{ip} is not a public address (private, loopback, link-local or reserved)."


def resolve(url: str) -> Target:
    """Check `url` and resolve its host; every address it resolves to must be allowed (raises Refused)."""
    parts, port = _split(url)
    host = parts.hostname
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Refused(f"The host {host!r} cannot be resolved ({exc}).") from None
    addresses = list(dict.fromkeys(info[4][0] for info in found))
    for address in addresses:
        problem = refused_address(address)
        if problem:
            raise Refused(f"The host {host!r} resolves to {problem}")
    path = parts.path or "/"
    return Target(scheme=parts.scheme.lower(), host=host, port=port,
                  path=path + (f"?{parts.query}" if parts.query else ""), address=addresses[0])


def check_url(url: str) -> None:
    """The registration check: a ValidationError naming `url` when it may not be sent to."""
    try:
        resolve(url)
    except Refused as exc:
        raise ValidationError({"url": [str(exc)]}) from None
