"""API token authentication for DRF (REST, the store, tools, /mcp): `Authorization: Token <key>` or
`Bearer <key>`, or `x-api-key: <key>` (LangGraph's SDK). The key's SHA-256 digest finds the token.

The token, its user and the database session's binding are one statement (`_TOKEN_SQL`): the session is bound to
the token's user and to the token's project and agent when it has them (core/rls.py), and only for a live token
(not revoked, not expired by PostgreSQL's clock) of an active user. Nothing is cached, so a revoked or expired
token is refused by the very next request, in every process. Python checks expiry again with its own clock and
refuses, leaving the session bound to nobody, should the two clocks disagree at the expiry instant.
"""

import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from oauth2_provider.models import get_access_token_model
from rest_framework import authentication
from rest_framework.exceptions import AuthenticationFailed

from accounts import audit, endusers, keys, oauth
from accounts.models import ApiToken
from core import grants, rls

LAST_USED_EVERY = timedelta(minutes=1)  # last_used_at is written at most this often per token

# The token's user (all its columns) and token (aliased), and the session bound to that user and the token's scope
# when the token is live, else to nobody; bypass off either way. No row: no such token, and the session keeps the
# middleware's binding (nobody).
_TOKEN_SQL = """
    SELECT u.*, t.id AS tok_id, t.name AS tok_name, t.prefix AS tok_prefix, t.access AS tok_access,
           t.project_id AS tok_project_id, t.agent_id AS tok_agent_id, t.for_end_users AS tok_for_end_users,
           t.created_at AS tok_created_at, t.expires_at AS tok_expires_at, t.last_used_at AS tok_last_used_at,
           t.revoked_at AS tok_revoked_at, b.ok AS tok_bound,
           set_config('memento.user_id', CASE WHEN b.ok THEN u.id::text ELSE '' END, false),
           set_config('memento.rls_bypass', 'off', false),
           set_config('memento.project_id', CASE WHEN b.ok THEN coalesce(t.project_id::text, '') ELSE '' END, false),
           set_config('memento.agent_id', CASE WHEN b.ok THEN t.agent_id ELSE '' END, false)
    FROM {token} t
    JOIN {user} u ON u.id = t.user_id
    CROSS JOIN LATERAL (SELECT u.is_active AND t.revoked_at IS NULL
                               AND (t.expires_at IS NULL OR t.expires_at > now()) AS ok) b
    WHERE t.digest = %s
"""
# The same for an OAuth access token (django-oauth-toolkit keeps only its SHA-256, `token_checksum`): its project
# is the grant's `project:<id>` scope; it binds no agent.
_OAUTH_SQL = """
    SELECT u.*, t.id AS tok_id, t.scope AS tok_scope, t.expires AS tok_expires_at, t.resource AS tok_resource,
           t.application_id AS tok_application_id, b.ok AS tok_bound,
           set_config('memento.user_id', CASE WHEN b.ok THEN u.id::text ELSE '' END, false),
           set_config('memento.rls_bypass', 'off', false),
           set_config('memento.project_id',
                      CASE WHEN b.ok THEN coalesce(substring(t.scope from '(?:^| )project:([0-9]+)(?: |$)'), '')
                      ELSE '' END, false),
           set_config('memento.agent_id', '', false)
    FROM {token} t
    JOIN {user} u ON u.id = t.user_id
    CROSS JOIN LATERAL (SELECT u.is_active AND t.expires > now() AS ok) b
    WHERE t.token_checksum = %s
"""
_TOKEN_FIELDS = ("id", "name", "prefix", "access", "project_id", "agent_id", "for_end_users", "created_at",
                 "expires_at", "last_used_at", "revoked_at")


def _token_from(user) -> ApiToken:
    token = ApiToken(user=user, **{name: getattr(user, f"tok_{name}") for name in _TOKEN_FIELDS})
    token._state.adding, token._state.db = False, user._state.db
    return token


def _touch(token: ApiToken, address: str | None) -> None:
    """last_used_at (and from where), at most once a minute per token: a GET need not write every time."""
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now, last_used_from=address or None)
        if token.last_used_at is None:
            audit.record(audit.Kind.TOKEN_FIRST_USED, user=token.user, address=address, token_prefix=token.prefix)


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>`, or `x-api-key: <key>` without an Authorization header; binds the database
    session to the token's user and scope, and sets the request's grant (read-only or not: core/grants.py)."""

    request = None

    def authenticate(self, request):
        self.request = request
        api_key = request.META.get("HTTP_X_API_KEY")
        if api_key and not authentication.get_authorization_header(request):
            return self.authenticate_credentials(api_key)
        return super().authenticate(request)

    def authenticate_credentials(self, key):
        User = get_user_model()
        address = audit.address_of(self.request)
        rows = list(User.objects.raw(_TOKEN_SQL.format(user=User._meta.db_table, token=ApiToken._meta.db_table),
                                     [keys.digest(key)]))
        if not rows:
            found = oauth_credentials(User, key, self.request)
            if found is not None:
                return found
            # the session keeps the binding it had (the middleware's)
            audit.failed(address=address, token_prefix=keys.prefix(key), reason="unknown token")
            raise AuthenticationFailed(_("Invalid token."))
        user = rows[0]
        token = _token_from(user)
        binding = rls.Binding(user.pk, False, token.project_id, token.agent_id or None)
        rls._applied(binding if user.tok_bound else rls.Binding(None, False))
        refusal = self._refusal(user, token)
        if refusal:
            audit.failed(address=address, token_prefix=token.prefix, reason=refusal, user=user)
            raise AuthenticationFailed(refusal)
        if not user.tok_bound:  # live by Python's clock, not yet by PostgreSQL's: bind as the statement would have
            rls.activate(user.pk, project_id=token.project_id, agent_id=token.agent_id)
        grants.grant_for_request(grants.Grant(read_only=token.read_only, label=f"{token.prefix}…"))
        _touch(token, address)
        if token.for_end_users:
            user = endusers.acting_for(request=self.request, token=token)
        return user, token

    @staticmethod
    def _refusal(user, token: ApiToken) -> str | None:
        if not user.is_active:
            return str(_("User inactive or deleted."))
        if token.revoked_at is not None:
            return "Token has been revoked: make a new one in the panel (Settings) or POST /api/tokens/."
        if token.expires_at is not None and token.expires_at <= timezone.now():
            return "Token has expired: get a new one from POST /api/auth/token/ or the panel."
        return None


    def authenticate_header(self, request):
        """The 401's challenge names where to learn how to sign in with OAuth (RFC 9728; the MCP authorization
        specification): the protected-resource metadata of /mcp, or of the API."""
        path = "/mcp" if request.path.startswith("/mcp") else ""
        metadata = request.build_absolute_uri(f"/.well-known/oauth-protected-resource{path}")
        return f'Bearer realm="memento", resource_metadata="{metadata}"'


def oauth_credentials(User, key: str, request):
    """(user, access token) for a live OAuth access token, with the session bound to its user and project and
    the request's grant read-only unless it has the `write` scope; None when `key` is no OAuth access token."""
    AccessToken = get_access_token_model()
    rows = list(User.objects.raw(_OAUTH_SQL.format(user=User._meta.db_table, token=AccessToken._meta.db_table),
                                 [keys.digest(key)]))
    if not rows:
        return None
    user = rows[0]
    scopes = user.tok_scope.split()
    project_id = oauth.project_of(scopes)
    rls._applied(rls.Binding(user.pk, False, project_id) if user.tok_bound else rls.Binding(None, False))
    address = audit.address_of(request)
    token = AccessToken(id=user.tok_id, user=user, scope=user.tok_scope, expires=user.tok_expires_at,
                        application_id=user.tok_application_id, resource=user.tok_resource)
    token._state.adding, token._state.db = False, user._state.db
    label = f"OAuth grant {user.tok_id}"
    refusal = (str(_("User inactive or deleted.")) if not user.is_active else
               "Token has expired: refresh it." if token.expires <= timezone.now() else
               "This token is for another resource." if not _covers(token.resource, request) else None)
    if refusal:
        rls.activate(None)
        audit.failed(address=address, token_prefix="oauth", reason=refusal, user=user)
        raise AuthenticationFailed(refusal)
    if not user.tok_bound:
        rls.activate(user.pk, project_id=project_id)
    grants.grant_for_request(grants.Grant(read_only=oauth.WRITE not in scopes, label=label))
    return user, token


def _covers(resources, request) -> bool:
    """The token's RFC 8707 resources (none: any of ours) include the URL asked for."""
    if isinstance(resources, str):  # read by a raw statement: the column's JSON text
        resources = json.loads(resources or "[]")
    if not resources:
        return True
    if request is None:
        return False
    asked = request.build_absolute_uri(request.path).rstrip("/")
    return any(asked == r.rstrip("/") or asked.startswith(r.rstrip("/") + "/") for r in resources)


class BearerTokenAuthentication(TokenAuthentication):
    """The same tokens sent as `Authorization: Bearer <key>`, as MCP clients send them; OAuth access tokens
    too."""

    keyword = "Bearer"


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """The schema names the Bearer form apart from `Token` (both would otherwise be "tokenAuth")."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"
    priority = 1  # above drf-spectacular's own scheme for every TokenAuthentication subclass

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer"}
