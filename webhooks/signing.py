"""Webhook signatures: HMAC-SHA256 with the endpoint's secret over `<timestamp>.<body>`, sent as

    Memento-Signature: t=<unix seconds>,v1=<hex digest>

A receiver recomputes the digest over the timestamp and the raw body it got, compares in constant time, and
refuses old timestamps (replays). README.md ("Webhooks") has the same check for receivers to copy.
"""

import hashlib
import hmac
import secrets
import time

HEADER = "Memento-Signature"
TOLERANCE_SECONDS = 300  # a receiver's default window for the timestamp


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def digest(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature(secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The header's value for `body` signed now (or at `timestamp`)."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    return f"t={timestamp},v1={digest(secret, timestamp, body)}"


def verify(secret: str, body: bytes, header: str, *, tolerance: int = TOLERANCE_SECONDS,
           now: float | None = None) -> bool:
    """Whether `header` signs `body` with `secret` within `tolerance` seconds of now."""
    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    return hmac.compare_digest(digest(secret, timestamp, body), fields.get("v1", ""))
