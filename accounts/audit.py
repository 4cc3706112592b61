"""The credentials audit trail (AuthEvent): sign-ins through Django's signals, token and OAuth events from the
services, refused tokens from the authentication. One line per event; written outside the caller's transaction
concerns (an audit line for a refused request must survive the refusal)."""

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.db import connection
from django.dispatch import receiver
from rest_framework.throttling import BaseThrottle

from accounts.models import AuthEvent

Kind = AuthEvent.Kind


def address_of(request) -> str | None:
    """The address the throttles count (the peer, or behind a proxy the one it appends: REST_FRAMEWORK's
    NUM_PROXIES)."""
    if request is None:
        return None
    return BaseThrottle().get_ident(request) or None


def record(kind: str, *, user=None, address: str | None = None, token_prefix: str = "", detail: str = "") -> None:
    """One audit line. Inserted without RETURNING: the session may not be bound to the user it concerns (a
    failed sign-in, a refused token), and row-level security lets anyone add a line but read only their own."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {AuthEvent._meta.db_table} (user_id, kind, at, address, token_prefix, detail) "
            "VALUES (%s, %s, now(), %s, %s, %s)",
            [getattr(user, "pk", user), kind, address or None, token_prefix[:16], detail[:200]],
        )


def failed(*, address: str | None, token_prefix: str, reason: str, user=None) -> None:
    """A refused token: who (when known), from where, which prefix, why."""
    record(Kind.AUTH_FAILED, user=user, address=address, token_prefix=token_prefix, detail=reason)


@receiver(user_logged_in)
def _signed_in(sender, request, user, **kwargs) -> None:
    record(Kind.SIGNED_IN, user=user, address=address_of(request),
           detail="panel or admin" if request is not None and not request.path.startswith("/api/") else "API")


@receiver(user_login_failed)
def _sign_in_failed(sender, credentials, request=None, **kwargs) -> None:
    username = str(credentials.get("username", ""))[:150]
    user = get_user_model().objects.filter(username=username).first() if username else None
    record(Kind.SIGN_IN_FAILED, user=user, address=address_of(request), detail=f"username {username!r}")
