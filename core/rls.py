"""Row-level security wiring: tell PostgreSQL on whose behalf each connection is working.

The tables that hold user data carry a policy (each app's maintenance_role_bypass migration) that shows a row only
when its `owner_id` equals the `memento.user_id` setting of the connection, or when `memento.rls_bypass` is `on`
*and* the connection's role is a member of the maintenance role. Web processes log in as the app role, which is no
member (memento/roles.py): for them the bypass setting does nothing, whoever sets it.

- Web requests run as the authenticated user: the middleware (session logins) and the DRF authentication classes
  (tokens, sent as `Token` or `Bearer`, or as `x-api-key` like LangGraph's SDK; /mcp too) set the user; anonymous
  requests see nothing. Staff pages of the Django admin ask for the bypass, which only a process logged in as the
  maintenance role gets (`manage.py runserver` for operators); served by gunicorn, they show staff's own rows.
- Processes that are not serving a request (Celery workers, management commands, the test runner outside a
  request) log in as the maintenance role and start in bypass: they are system code that loads rows by id and
  scopes in code. A web process (`memento.wsgi`) calls `enforce_by_default()` so a connection outside any request
  sees nothing.

Code-level scoping (`Memory.objects.owned_by(user)`) stays the first line of defence; this is the second.
"""

from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed

_process_default_bypass = True


def enforce_by_default() -> None:
    """Make connections of this process see no user rows unless a user is activated (web processes)."""
    global _process_default_bypass
    _process_default_bypass = False


def _apply(user_id: int | None, bypass: bool) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('memento.user_id', %s, false), set_config('memento.rls_bypass', %s, false)",
            ["" if user_id is None else str(user_id), "on" if bypass else "off"],
        )
    connection.memento_rls = (user_id, bypass)  # connections are per thread, so is this


def _streamed_as(content, binding: tuple[int | None, bool]):
    """A streamed body is read after the middleware has reset the session: bind it again while it is read."""
    activate(binding[0], bypass=binding[1])
    try:
        yield from content
    finally:
        reset()


def activate(user_id: int | None, *, bypass: bool = False) -> None:
    """Act as this user (or as nobody) on the default connection until `reset()`."""
    _apply(user_id, bypass)


def reset() -> None:
    """Back to the process default."""
    _apply(None, _process_default_bypass)


@contextmanager
def as_user(user_id: int):
    """Run a block with the database showing only `user_id`'s rows."""
    activate(user_id)
    try:
        yield
    finally:
        reset()


@receiver(connection_created)
def _set_process_default(sender, connection, **kwargs) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('memento.user_id', '', false), set_config('memento.rls_bypass', %s, false)",
            ["on" if _process_default_bypass else "off"],
        )


class RowLevelSecurityMiddleware:
    """Bind the database session to the logged-in user for the length of one request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = request.user
        staff_admin = user.is_authenticated and user.is_staff and request.path.startswith("/admin/")
        activate(user.pk if user.is_authenticated else None, bypass=staff_admin)
        try:
            response = self.get_response(request)
            if response.streaming:  # bound as the view left it (a token user is bound by DRF authentication)
                response.streaming_content = _streamed_as(response.streaming_content, connection.memento_rls)
            return response
        finally:
            reset()


def token_expires_at(token: Token) -> datetime | None:
    """When `token` stops being accepted: API_TOKEN_TTL_DAYS after it was made (None: 0 days, never)."""
    days = settings.API_TOKEN_TTL_DAYS
    return token.created + timedelta(days=days) if days else None


def token_expired(token: Token) -> bool:
    expires = token_expires_at(token)
    return expires is not None and expires <= timezone.now()


def token_obtain(*, user) -> Token:
    """`user`'s API token, a new one when there is none or it has expired (the sign-in endpoint, `serve`)."""
    with transaction.atomic():
        token = Token.objects.select_for_update().filter(user=user).first()
        if token is not None and not token_expired(token):
            return token
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>`, or `x-api-key: <key>` without an Authorization header (how LangGraph's SDK
    sends its API key); binds the database session to the token's user. A token older than API_TOKEN_TTL_DAYS is
    refused (401), however it is sent."""

    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            raise AuthenticationFailed("Token has expired: get a new one from POST /api/auth/token/ or the panel.")
        return user, token

    def authenticate(self, request):
        api_key = request.META.get("HTTP_X_API_KEY")
        if api_key and not authentication.get_authorization_header(request):
            result = self.authenticate_credentials(api_key)
        else:
            result = super().authenticate(request)
        if result is not None:
            activate(result[0].pk)
        return result


class BearerTokenAuthentication(TokenAuthentication):
    """The same tokens sent as `Authorization: Bearer <key>`, as MCP clients send them."""

    keyword = "Bearer"


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """The schema names the Bearer form apart from `Token` (both would otherwise be "tokenAuth")."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"
    priority = 1  # above drf-spectacular's own scheme for every TokenAuthentication subclass

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer"}
