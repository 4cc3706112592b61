import hashlib
import hmac
import re
import time
from pathlib import Path

from django.conf import settings

from webhooks import signing


def test_the_signature_is_hmac_sha256_over_timestamp_dot_body():
    header = signing.signature("whsec_k", b'{"a":1}', timestamp=1700000000)
    expected = hmac.new(b"whsec_k", b'1700000000.{"a":1}', hashlib.sha256).hexdigest()
    assert header == f"t=1700000000,v1={expected}"


def test_verify_refuses_another_body_another_secret_an_old_timestamp_and_garbage():
    header = signing.signature("whsec_k", b"body", timestamp=1000)
    assert signing.verify("whsec_k", b"body", header, now=1000)
    assert not signing.verify("whsec_k", b"bodY", header, now=1000)
    assert not signing.verify("whsec_x", b"body", header, now=1000)
    assert not signing.verify("whsec_k", b"body", header, now=1000 + signing.TOLERANCE_SECONDS + 1)
    assert not signing.verify("whsec_k", b"body", "nonsense", now=1000)


def test_secrets_are_new_each_time():
    assert signing.new_secret() != signing.new_secret()
    assert signing.new_secret().startswith("whsec_")


def test_readmes_verification_snippet_accepts_a_delivery_and_refuses_a_forgery():
    """The receiver's check README.md gives ("Webhooks"), run as written against signatures made here."""
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    section = readme.split("\n### Webhooks\n", 1)[1].split("\n### ", 1)[0]
    [snippet] = re.findall(r"```python\n(.*?)```", section, re.S)
    scope: dict = {}
    exec(compile(snippet, "README.md", "exec"), scope)  # noqa: S102 -- README's own example
    body = b'{"id":"d1","event":"memory.created","data":{}}'
    header = signing.signature("whsec_k", body)
    assert scope["verify"]("whsec_k", body, header)
    assert not scope["verify"]("whsec_k", body + b" ", header)
    assert not scope["verify"]("whsec_other", body, header)
    assert not scope["verify"]("whsec_k", body, signing.signature("whsec_k", body, timestamp=int(time.time()) - 600))
