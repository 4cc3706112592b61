"""The panel's own writes: the user's API token. Memory and document writes go through their apps' services."""

from django.db import transaction
from rest_framework.authtoken.models import Token


def token_issue(*, user) -> Token:
    """A new API token for `user`. DRF keeps one token per user, so a new one replaces (and revokes) the old."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def token_revoke(*, user) -> bool:
    """Revoke `user`'s API token; False when there was none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
