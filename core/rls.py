"""Row-level security wiring: tell PostgreSQL on whose behalf each connection is working.

The tables that hold user data carry a policy (each app's maintenance_role_bypass migration) that shows a row only
when its `owner_id` equals the `memento.user_id` setting of the connection, or when `memento.rls_bypass` is `on`
*and* the connection's role is a member of the maintenance role. Web processes log in as the app role, which is no
member (memento/roles.py): for them the bypass setting does nothing, whoever sets it.

- Web requests run as the authenticated user: the middleware (session logins) and the DRF authentication classes
  (accounts/authentication.py: API and OAuth tokens, sent as `Token` or `Bearer`, or as `x-api-key` like
  LangGraph's SDK; /mcp too) set the user; anonymous requests see nothing. A token bound to a project and/or an
  agent also sets `memento.project_id` / `memento.agent_id`: the policies of tables whose rows belong to a
  project or an agent (accounts migration 0002) then show only those, and `confinement()` tells code the same.
  Staff pages of the Django admin ask for the bypass, which only a process logged in as the maintenance role
  gets (`manage.py runserver` for operators); served by gunicorn, they show staff's own rows.
- Processes that are not serving a request (Celery workers, management commands, the test runner outside a
  request) log in as the maintenance role and start in bypass: they are system code that loads rows by id and
  scopes in code. A web process (`memento.wsgi`) calls `enforce_by_default()` so a connection outside any request
  sees nothing.

Code-level scoping (`Memory.objects.owned_by(user)`, which applies a token's confinement too) stays the first line
of defence; this is the second.
"""

import threading
from contextlib import contextmanager
from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.db import connection
from django.db.backends.signals import connection_created
from django.dispatch import receiver

from core import grants

_process_default_bypass = True
_local = threading.local()


def enforce_by_default() -> None:
    """Make connections of this process see no user rows unless a user is activated (web processes)."""
    global _process_default_bypass
    _process_default_bypass = False


class Binding(NamedTuple):
    """On whose behalf a connection works: a user (or nobody), the maintenance bypass, and the scope a token may
    confine the user to (a project, an agent; None: not confined)."""

    user_id: int | None
    bypass: bool
    project_id: int | None = None
    agent_id: str | None = None

    @property
    def confined(self) -> bool:
        return self.project_id is not None or bool(self.agent_id)


# The four settings the policies read (memento_owner_visible, memento_row_visible); '' is "none".
BIND_SQL = ("SELECT set_config('memento.user_id', %s, false), set_config('memento.rls_bypass', %s, false), "
            "set_config('memento.project_id', %s, false), set_config('memento.agent_id', %s, false)")


def bind_params(binding: Binding) -> list[str]:
    return ["" if binding.user_id is None else str(binding.user_id), "on" if binding.bypass else "off",
            "" if binding.project_id is None else str(binding.project_id), binding.agent_id or ""]


def _apply(binding: Binding) -> None:
    if _in_force(binding):  # a round trip saved: every request starts by binding nobody, as the last one ended
        return
    if connection.connection is None and binding == Binding(None, _process_default_bypass):
        return  # a connection opened later starts so bound (below): an anonymous request for the API schema or
        # docs never touches the database (the schema built while it was down logged a traceback)
    with connection.cursor() as cursor:
        cursor.execute(BIND_SQL, bind_params(binding))
    _applied(binding)


def _in_force(binding: Binding) -> bool:
    """The session is known to carry `binding` now: set outside any transaction on this very connection (a
    setting made inside one is undone if it rolls back, and a new connection starts from the process default)."""
    return (connection.connection is not None and not connection.in_atomic_block
            and getattr(connection, "memento_rls_settled", None) == binding)


def _applied(binding: Binding, conn=connection) -> None:
    conn.memento_rls = binding  # connections are per thread, so is this
    conn.memento_rls_settled = None if conn.in_atomic_block else binding


def _streamed_as(content, binding: Binding):
    """A streamed body is read after the middleware has reset the session: bind it again while it is read."""
    _apply(binding)
    try:
        yield from content
    finally:
        reset()


def activate(user_id: int | None, *, bypass: bool = False, project_id: int | None = None,
             agent_id: str | None = None) -> None:
    """Act as this user (or as nobody) on the default connection until `reset()`, confined to one project
    and/or one agent when given (a bound token)."""
    _apply(Binding(user_id, bypass, project_id, agent_id or None))


def rebind(binding: Binding) -> None:
    """Back to a binding taken from `bound()` (code that acts as another user for a moment)."""
    _apply(binding)


def bound() -> Binding:
    """What the default connection is bound to now (the process default before any binding)."""
    return getattr(connection, "memento_rls", None) or Binding(None, _process_default_bypass)


def confinement(user) -> Binding | None:
    """The binding when it confines `user` to a project or an agent (code-level scoping applies the same limits
    as the policies), else None."""
    binding = bound()
    return binding if binding.confined and binding.user_id == getattr(user, "pk", user) else None


def fit_to_scope(instance) -> None:
    """A row about to be written by a user the binding confines (`project_id`, and `agent_id` where the model has
    one): an unset project or agent takes the binding's, another is refused (400 naming the field) rather than
    left for the policies to refuse."""
    scope = confinement(instance.owner_id)
    if scope is None:
        return
    if scope.project_id is not None:
        if instance.project_id is None:
            instance.project_id = scope.project_id
        elif instance.project_id != scope.project_id:
            raise ValidationError({"project": ["This token is bound to another project."]})
    if scope.agent_id and hasattr(instance, "agent_id"):
        if not instance.agent_id:
            instance.agent_id = scope.agent_id
        elif instance.agent_id != scope.agent_id:
            raise ValidationError({"agent_id": ["This token is bound to another agent_id."]})


def reset() -> None:
    """Back to the process default."""
    _apply(Binding(None, _process_default_bypass))


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
    binding = Binding(None, _process_default_bypass)
    with connection.cursor() as cursor:
        cursor.execute(BIND_SQL, bind_params(binding))
    _applied(binding, connection)


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
        grants.clear()  # a token's limits are set by its authentication, for this request only
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
            grants.clear()
