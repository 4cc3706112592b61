"""One POST of a delivery: the signed JSON body sent to the checked address, no redirects, a short timeout."""

import json
from dataclasses import dataclass

import urllib3
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder

from webhooks import addresses, signing

USER_AGENT = "Memento-Webhooks/1"
ERROR_MAX = 2000  # characters of an error kept in the log


@dataclass(frozen=True)
class Result:
    """What one attempt got: `ok` for a 2xx answer; else the status (if any) and why."""

    ok: bool
    status: int | None = None
    error: str = ""
    final: bool = False  # a retry cannot help (the URL is refused)


def body_of(delivery) -> bytes:
    """The same bytes at every attempt (the receiver's repeat check keys on `id`)."""
    return json.dumps({"id": str(delivery.pk), "event": delivery.event, "created_at": delivery.created_at,
                       "data": delivery.payload}, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


def _pool(target: addresses.Target):
    timeout = urllib3.Timeout(total=settings.WEBHOOKS_TIMEOUT)
    if target.scheme == "https":  # connect to the checked address, verify the certificate for the URL's host
        return urllib3.HTTPSConnectionPool(target.address, target.port, timeout=timeout, retries=False,
                                           server_hostname=target.host, assert_hostname=target.host)
    return urllib3.HTTPConnectionPool(target.address, target.port, timeout=timeout, retries=False)


def post(*, url: str, secret: str, body: bytes, headers: dict[str, str]) -> Result:
    """POST `body` to `url` signed with `secret`; every failure is a Result, never an exception."""
    try:
        target = addresses.resolve(url)
    except addresses.Refused as exc:
        return Result(ok=False, error=f"Refused: {exc}", final=True)
    host = target.host if ":" not in target.host else f"[{target.host}]"
    default_port = target.port == (443 if target.scheme == "https" else 80)
    sent = {"Host": host if default_port else f"{host}:{target.port}", "Content-Type": "application/json",
            "User-Agent": USER_AGENT, signing.HEADER: signing.signature(secret, body), **headers}
    pool = _pool(target)
    try:
        response = pool.urlopen("POST", target.path, body=body, headers=sent, redirect=False, retries=False,
                                assert_same_host=False, preload_content=False)
        try:
            response.read(64 * 1024, decode_content=False)  # a little of the answer, never all of a huge one
        finally:
            response.release_conn()
    except Exception as exc:  # noqa: BLE001 -- any network failure is the attempt's result
        return Result(ok=False, error=f"{type(exc).__name__}: {exc}"[:ERROR_MAX])
    finally:
        pool.close()
    if 200 <= response.status < 300:
        return Result(ok=True, status=response.status)
    why = "a redirect (not followed)" if 300 <= response.status < 400 else "an error status"
    return Result(ok=False, status=response.status, error=f"HTTP {response.status}: {why}.")
