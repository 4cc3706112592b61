"""What the request's credential may do beyond whose rows it sees: a read-only token may not write.

Row-level security confines *which* rows a request sees (core/rls.py: the user, and a token's project or agent);
this module is the other half of a token's scope, in code: the authentication sets the request's grant
(`grant_for_request`), the middleware clears it when the response leaves, and

- `WriteAccess`, a default DRF permission, refuses every unsafe method to a read-only token except the views
  whose POST only reads (`settings.TOKEN_READS_BY_POST`: searches) and those that check each call themselves
  (`settings.TOKEN_CHECKS_EACH_CALL`: tool calls, MCP, the store's batch);
- `require_write(what)` is that check: the tool registry calls it before a tool that writes, the store before a
  put or a delete.

Fail closed: a new POST view is refused to a read-only token until it is named in one of the two settings.
"""

import threading
from dataclasses import dataclass

from django.conf import settings
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission

_local = threading.local()


@dataclass(frozen=True)
class Grant:
    """What one request's credential allows: `read_only` for a read-only token (or OAuth grant); `label` names
    the credential in refusals (a token's prefix, never the key)."""

    read_only: bool = False
    label: str = ""


FULL = Grant()


def grant_for_request(grant: Grant) -> None:
    _local.grant = grant


def clear() -> None:
    _local.grant = FULL


def current() -> Grant:
    return getattr(_local, "grant", FULL)


def require_write(what: str) -> None:
    """Refuse (403) `what` when the request's credential is read-only."""
    grant = current()
    if grant.read_only:
        raise PermissionDenied(f"This token ({grant.label}) is read-only: it cannot {what}.")


class WriteAccess(BasePermission):
    """Unsafe methods need a read-write credential (see the module docstring for the views that read by POST)."""

    message = "This token is read-only."

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS or not current().read_only:
            return True
        name = getattr(request.resolver_match, "url_name", None)
        if name in settings.TOKEN_READS_BY_POST or name in settings.TOKEN_CHECKS_EACH_CALL:
            return request.method == "POST"
        self.message = f"This token ({current().label}) is read-only: it cannot {request.method} here."
        return False
