"""Writes of credentials: tokens made (the key returned once, only its digest kept), revoked, and the single
sign-in token scripts get from POST /api/auth/token/ and `serve`."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts import audit, keys
from accounts.models import ApiToken
from memories.models import Project

NAME_MAX = ApiToken._meta.get_field("name").max_length
AGENT_MAX = ApiToken._meta.get_field("agent_id").max_length
SIGN_IN_NAME = "sign-in"  # the tokens POST /api/auth/token/ and `serve` make


@dataclass(frozen=True)
class Issued:
    """A token just made and its key: the only time the key exists outside the client."""

    token: ApiToken
    key: str


def default_expiry(now: datetime | None = None) -> datetime | None:
    """API_TOKEN_TTL_DAYS from now (0 days: never)."""
    days = settings.API_TOKEN_TTL_DAYS
    return (now or timezone.now()) + timedelta(days=days) if days else None


def token_create(*, user, name: str, read_only: bool = False, project: Project | None = None, agent_id: str = "",
                 for_end_users: bool = False, expires_at: datetime | None = None, never_expires: bool = False,
                 address: str | None = None) -> Issued:
    """A new token for `user`. `expires_at` defaults to API_TOKEN_TTL_DAYS from now (`never_expires`: none).
    A project must be the user's own; a service token (`for_end_users`) acts for end users, whose data is not in
    the app account's projects, so it takes no project."""
    name = name.strip()
    errors = {}
    if not name or len(name) > NAME_MAX:
        errors["name"] = [f"Give the token a name of 1 to {NAME_MAX} characters."]
    if len(agent_id) > AGENT_MAX:
        errors["agent_id"] = [f"At most {AGENT_MAX} characters."]
    if project is not None and project.owner_id != user.pk:
        errors["project"] = ["Unknown project."]
    if project is not None and for_end_users:
        errors["project"] = ["A service token acts for end users, who have projects of their own: bind it to "
                             "no project."]
    if expires_at is not None and expires_at <= timezone.now():
        errors["expires_at"] = ["Must be in the future."]
    if errors:
        raise ValidationError(errors)
    key = keys.new_key()
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=name, prefix=keys.prefix(key), digest=keys.digest(key),
            access=ApiToken.Access.READ if read_only else ApiToken.Access.WRITE, project=project, agent_id=agent_id,
            for_end_users=for_end_users, expires_at=None if never_expires else expires_at or default_expiry(),
        )
        audit.record(audit.Kind.TOKEN_CREATED, user=user, address=address, token_prefix=token.prefix,
                     detail=f"{token.name}: {token.scope_text}")
    return Issued(token, key)


def token_revoke(*, token: ApiToken, address: str | None = None, reason: str = "revoked") -> bool:
    """Revoke `token` (refused from the next request on); False when it already was."""
    with transaction.atomic():
        revoked = ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        if revoked:
            audit.record(audit.Kind.TOKEN_REVOKED, user=token.user, address=address, token_prefix=token.prefix,
                         detail=f"{token.name}: {reason}")
    return bool(revoked)


def token_replace(*, token: ApiToken, address: str | None = None) -> Issued:
    """A new key with `token`'s name and scope (and as long a life as it was given), and `token` revoked: one
    transaction, so the account never has both or neither."""
    life = token.expires_at - token.created_at if token.expires_at else None
    with transaction.atomic():
        issued = token_create(user=token.user, name=token.name, read_only=token.read_only, project=token.project,
                              agent_id=token.agent_id, for_end_users=token.for_end_users,
                              expires_at=timezone.now() + life if life else None, never_expires=life is None,
                              address=address)
        token_revoke(token=token, address=address, reason=f"replaced by {issued.token.prefix}…")
    return issued


def tokens_revoke_all(*, user, reason: str) -> int:
    """Revoke every live token of `user` (a new password: whoever had the old one may have made tokens)."""
    with transaction.atomic():
        live = list(ApiToken.objects.filter(user=user, revoked_at__isnull=True))
        for token in live:
            token_revoke(token=token, reason=reason)
    return len(live)


def token_obtain(*, user, address: str | None = None) -> Issued:
    """The single-token flow for scripts (POST /api/auth/token/, `serve`): a new read-write token named
    "sign-in". Keys are not stored, so an earlier one cannot be handed back; earlier sign-in tokens stay valid
    until they expire or are revoked."""
    return token_create(user=user, name=SIGN_IN_NAME, address=address)
