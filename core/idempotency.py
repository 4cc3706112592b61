"""`Idempotency-Key` on the API's creating writes (the IETF httpapi Idempotency-Key draft): a retry with the same
key and the same request within IDEMPOTENCY_TTL_HOURS gets the first answer again (status and body, with
`Idempotent-Replayed: true`) and writes nothing; the same key with another request is a 409, and so is a retry
while the first is still being answered. Keys belong to the request's user (row-level security too).

`IdempotentWrites` is mixed into the views that create (their `idempotent` action or method names). The key is
claimed after authentication, permissions and throttles (a refused request claims nothing), in a short
transaction of its own so a concurrent retry sees it; the answer is stored when the response leaves. A 5xx, or
an error no handler turned into an answer, releases the key: the write rolled back, and the client may retry.
"""

import hashlib
import json
from datetime import timedelta

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.http import HttpResponse
from django.utils import timezone
from rest_framework import exceptions, status
from rest_framework.utils.encoders import JSONEncoder

from core.models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
KEY_MAX = IdempotencyKey._meta.get_field("key").max_length


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "idempotency_conflict"


class _Replay(Exception):
    def __init__(self, response: HttpResponse):
        self.response = response


def _ttl() -> timedelta:
    return timedelta(hours=settings.IDEMPOTENCY_TTL_HOURS)


def _key(request) -> str | None:
    value = request.headers.get(HEADER)
    if value is None:
        return None
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':  # the draft's form: a structured-field string
        value = value[1:-1]
    if not value.strip() or len(value) > KEY_MAX or not (value.isascii() and value.isprintable()):
        raise exceptions.ValidationError({HEADER: [f"1 to {KEY_MAX} printable ASCII characters (a UUID, say)."]})
    return value


def _feed(digest, value) -> None:
    """The parsed body in a canonical form: JSON with sorted keys; an uploaded file by its name and bytes (so a
    multipart retry with another boundary is the same request)."""
    if isinstance(value, UploadedFile):
        digest.update(f"file:{value.name}:{value.size}:".encode())
        for chunk in value.chunks():
            digest.update(chunk)
        value.seek(0)
    elif hasattr(value, "lists"):  # a QueryDict (form or multipart): every value of every field
        for name, values in sorted(value.lists()):
            digest.update(json.dumps(name).encode())
            for item in values:
                _feed(digest, item)
    else:
        digest.update(json.dumps(value, sort_keys=True, cls=JSONEncoder).encode())


def fingerprint(request) -> str:
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    _feed(digest, request.data)
    return digest.hexdigest()


def idempotency_claim(*, owner_id: int, key: str, request) -> IdempotencyKey:
    """Claim `key` for this request, or raise: `_Replay` with the first answer, `Conflict` for another request
    or one still in progress. An expired record of the key is replaced."""
    request_print = fingerprint(request)
    with transaction.atomic():
        IdempotencyKey.objects.filter(owner_id=owner_id, key=key, created_at__lt=timezone.now() - _ttl()).delete()
        row, created = IdempotencyKey.objects.get_or_create(
            owner_id=owner_id, key=key,
            defaults={"fingerprint": request_print, "method": request.method, "path": request.path[:2000]})
    if created:
        return row
    if row.fingerprint != request_print:
        raise Conflict(f"This {HEADER} was used with another request (method, path or body) in the last "
                       f"{settings.IDEMPOTENCY_TTL_HOURS} hours.")
    if row.response_status is None:
        raise Conflict(f"A request with this {HEADER} is still in progress; retry once it is answered.")
    replay = HttpResponse(row.response_body, status=row.response_status, content_type=row.response_type or None)
    replay[REPLAYED] = "true"
    raise _Replay(replay)


def idempotency_complete(*, claim: IdempotencyKey, response) -> None:
    """Store the answer (a client or success status) for retries, or release the key (a server error)."""
    if response.status_code >= 500:
        idempotency_release(claim=claim)
        return
    if hasattr(response, "render"):
        response.render()  # what the client gets, byte for byte (rendered once: Django does not render it again)
    IdempotencyKey.objects.filter(pk=claim.pk).update(
        response_status=response.status_code, response_body=response.content.decode(),
        response_type=response.get("Content-Type", ""), completed_at=timezone.now())


def idempotency_release(*, claim: IdempotencyKey) -> None:
    IdempotencyKey.objects.filter(pk=claim.pk).delete()


def idempotency_keys_purge(*, batch_size: int = 5000) -> int:
    """Delete records older than IDEMPOTENCY_TTL_HOURS, in batches (periodic; expired keys are also replaced
    when they come again)."""
    cutoff, purged = timezone.now() - _ttl(), 0
    while True:
        ids = list(IdempotencyKey.objects.filter(created_at__lt=cutoff).values_list("pk", flat=True)[:batch_size])
        if not ids:
            return purged
        purged += IdempotencyKey.objects.filter(pk__in=ids).delete()[0]


class IdempotentWrites:
    """For API views: the ViewSet actions (or, on plain APIViews, the lower-case HTTP methods) named in
    `idempotent` honour the Idempotency-Key header. Put it before the view's base class."""

    idempotent: frozenset[str] = frozenset()

    def idempotent_request(self, request) -> bool:
        if request.method not in ("POST", "PUT"):
            return False
        name = getattr(self, "action", None) or request.method.lower()
        return name in self.idempotent

    def initial(self, request, *args, **kwargs):
        self._claimed = None
        super().initial(request, *args, **kwargs)
        key = _key(request) if self.idempotent_request(request) else None
        if key is not None:
            self._claimed = idempotency_claim(owner_id=request.user.pk, key=key, request=request)

    def handle_exception(self, exc):
        if isinstance(exc, _Replay):
            return exc.response
        try:
            return super().handle_exception(exc)
        except Exception:
            claimed, self._claimed = getattr(self, "_claimed", None), None
            if claimed is not None:
                idempotency_release(claim=claimed)
            raise

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        claimed, self._claimed = getattr(self, "_claimed", None), None
        if claimed is not None:
            idempotency_complete(claim=claimed, response=response)
        return response
