import hashlib
import hmac

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
