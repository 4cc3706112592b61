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

import threading
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed

_process_default_bypass = True
_local = threading.local()


def enforce_by_default() -> None:
    """Make connections of this process see no user rows unless a user is activated (web processes)."""
    global _process_default_bypass
    _process_default_bypass = False


def _apply(user_id: int | None, bypass: bool) -> None:
    binding = (user_id, bypass)
    if _in_force(binding):  # a round trip saved: every request starts by binding nobody, as the last one ended
        return
    if connection.connection is None and binding == (None, _process_default_bypass):
        return  # a connection opened later starts so bound (below): an anonymous request for the API schema or
        # docs never touches the database (the schema built while it was down logged a traceback)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('memento.user_id', %s, false), set_config('memento.rls_bypass', %s, false)",
            ["" if user_id is None else str(user_id), "on" if bypass else "off"],
        )
    _applied(binding)


def _in_force(binding: tuple[int | None, bool]) -> bool:
    """The session is known to carry `binding` now: set outside any transaction on this very connection (a
    setting made inside one is undone if it rolls back, and a new connection starts from the process default)."""
    return (connection.connection is not None and not connection.in_atomic_block
            and getattr(connection, "memento_rls_settled", None) == binding)


def _applied(binding: tuple[int | None, bool], conn=connection) -> None:
    conn.memento_rls = binding  # connections are per thread, so is this
    conn.memento_rls_settled = None if conn.in_atomic_block else binding


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
    _applied((None, _process_default_bypass), connection)


def reset_after_response() -> None:
    """Called by what writes after the response, bound to the request's user (memories.bookkeeping): the
    middleware leaves the binding in place for it instead of resetting it, and that writer resets it when it is
    done (two round trips fewer than unbinding and binding the same user again)."""
    _local.reset_owed = True


class RowLevelSecurityMiddleware:
    """Bind the database session to the logged-in user for the length of one request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = request.user
        staff_admin = user.is_authenticated and user.is_staff and request.path.startswith("/admin/")
        _local.reset_owed = False
        activate(user.pk if user.is_authenticated else None, bypass=staff_admin)
        response = None
        try:
            response = self.get_response(request)
            if response.streaming:  # bound as the view left it (a token user is bound by DRF authentication)
                response.streaming_content = _streamed_as(response.streaming_content, connection.memento_rls)
            return response
        finally:
            # Unbound now, unless an after-response writer took that on (never for a streamed body, which
            # binds itself again while it is read). The next request binds its own user either way.
            if not _local.reset_owed or response is None or response.streaming:
                reset()
            _local.reset_owed = False


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
    refused (401), however it is sent.

    The token, its user and the binding are one statement (`_TOKEN_SQL`): nothing is cached, so a deleted
    (revoked) token, an inactive user or an expired token is refused by the very next request, in every process.
    The statement binds the session only when the token is good (PostgreSQL's clock; Python checks again with its
    own and refuses, leaving the session bound to nobody, should the two disagree at the expiry instant)."""

    def authenticate_credentials(self, key):
        User = get_user_model()
        days = settings.API_TOKEN_TTL_DAYS
        rows = list(User.objects.raw(_TOKEN_SQL.format(user=User._meta.db_table, token=Token._meta.db_table),
                                     [days, days, key]))
        if not rows:  # the session keeps the binding it had (the middleware's)
            raise AuthenticationFailed(_("Invalid token."))
        user = rows[0]
        _applied((user.pk if user.memento_bound else None, False))
        token = Token(key=key, user=user, created=user.token_created)
        token._state.adding, token._state.db = False, user._state.db
        if not user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        if token_expired(token):
            raise AuthenticationFailed("Token has expired: get a new one from POST /api/auth/token/ or the panel.")
        if not user.memento_bound:  # valid by Python's clock, not yet by PostgreSQL's: bind as before
            activate(user.pk)
        return user, token

    def authenticate(self, request):
        api_key = request.META.get("HTTP_X_API_KEY")
        if api_key and not authentication.get_authorization_header(request):
            return self.authenticate_credentials(api_key)
        return super().authenticate(request)


# The token's user (all its columns), the token's age, and the session bound to that user when the user is active
# and the token unexpired (a TTL of 0 days: never), else to nobody; bypass off either way. No row: no such token,
# and the session keeps the middleware's binding (nobody).
_TOKEN_SQL = """
    SELECT u.*, t.created AS token_created, b.ok AS memento_bound,
           set_config('memento.user_id', CASE WHEN b.ok THEN u.id::text ELSE '' END, false),
           set_config('memento.rls_bypass', 'off', false)
    FROM {token} t
    JOIN {user} u ON u.id = t.user_id
    CROSS JOIN LATERAL (SELECT u.is_active AND (%s = 0 OR t.created + %s * interval '1 day' > now()) AS ok) b
    WHERE t.key = %s
"""


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
