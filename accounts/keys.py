"""API token keys: made random, stored as a digest, shown by prefix. One definition of each."""

import hashlib
import secrets

KEY_PREFIX = "mem_"  # says what the secret is (secret scanners, a person reading a config file)
PREFIX_LENGTH = len(KEY_PREFIX) + 8


def new_key() -> str:
    """256 random bits: a fast digest is enough to store them (no guessing, nothing to stretch)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def prefix(key: str) -> str:
    """Enough of a key to tell tokens apart (and match the one a client holds), not enough to use it."""
    return key[:PREFIX_LENGTH]
