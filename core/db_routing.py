"""Read replicas: a read-only request is served by a streaming replica (`DATABASE_REPLICA_URLS`), unless the
user wrote something the replica has not replayed yet (read-your-writes).

How a request reaches the replica: the views that only read name their read actions (`ReplicaReads`). Once DRF
has authenticated the request on the primary (the token lookup binds the session and may write `last_used_at`),
this thread's `default` connection is swapped for a replica's for the rest of the view, then swapped back.
Swapping the connection, not routing querysets, is deliberate: the search paths run raw SQL on
`django.db.connection` and the row-level security binding (core/rls.py) is made on that same connection, so every
statement of the view, ORM or raw, goes to the one connection that was bound. What a read leaves behind
(`memories.bookkeeping`) is written after the response, on the primary.

Row-level security on the replica: the replica connection is bound to the request's user, project and agent by
the very statement core/rls.py uses (`BIND_SQL`), in the same round trip that reads the replica's replay position,
before anything else runs on it; the replica has the primary's policies (it replays them). A replica that cannot
be reached is skipped for that request (the primary answers), with one warning line.

Read-your-writes: after a request that may have written (an unsafe method outside `ReplicaReads`' reads), the
primary's WAL position (`pg_current_wal_lsn()`) is kept for its user in the cache (`CACHE_URL`: Redis when there
are several web nodes) for REPLICA_READ_YOUR_WRITES_SECONDS; that user's reads go to the primary while the
replica's `pg_last_wal_replay_lsn()` is behind it. Workers never use replicas: their writes (extraction,
embeddings) reach the replica when it replays them.
"""

import logging
import random
import threading

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from core import rls

logger = logging.getLogger(__name__)
_local = threading.local()

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# the binding and the replay position in one round trip; NULL when the server is not in recovery (a primary)
_BIND_AND_REPLAY_SQL = rls.BIND_SQL + ", pg_last_wal_replay_lsn()::text"


def lsn_value(lsn: str | None) -> int | None:
    """A pg_lsn's text ('16/B374D848') as a number to compare."""
    if not lsn:
        return None
    high, low = lsn.split("/")
    return (int(high, 16) << 32) + int(low, 16)


def _written_key(user_id: int) -> str:
    return f"memento:written-lsn:{user_id}"


def replica_aliases() -> list[str]:
    return list(getattr(settings, "DATABASE_REPLICAS", ()))


def remember_write(user_id: int) -> None:
    """Keep the primary's WAL position after `user_id`'s write: their reads wait for a replica that has it."""
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()::text")
            lsn = lsn_value(cursor.fetchone()[0])
    except DatabaseError:
        logger.warning("could not read the primary's WAL position after a write by user %s", user_id)
        return
    cache.set(_written_key(user_id), lsn, settings.REPLICA_READ_YOUR_WRITES_SECONDS)


def serving_replica() -> str | None:
    """The replica alias this thread's reads go to now, or None (the primary)."""
    return getattr(_local, "replica", None)


def use_replica(user_id: int | None) -> str | None:
    """Serve the rest of this thread's request from a replica, bound as the primary's connection is now; None
    (nothing changes) when no replica is configured, reachable and caught up with `user_id`'s last write."""
    aliases = replica_aliases()
    primary = connections[DEFAULT_DB_ALIAS]
    if not aliases or serving_replica() is not None or primary.in_atomic_block:
        return None
    alias = random.choice(aliases)
    replica = connections[alias]
    binding = rls.bound()
    try:
        with replica.cursor() as cursor:
            cursor.execute(_BIND_AND_REPLAY_SQL, rls.bind_params(binding))
            replayed = lsn_value(cursor.fetchone()[-1])
    except DatabaseError as exc:
        logger.warning("replica %s not used: %s", alias, str(exc).strip().splitlines()[0] if str(exc) else exc)
        replica.close()  # connected again by a later request
        return None
    rls._applied(binding, replica)
    written = cache.get(_written_key(user_id)) if user_id is not None else None
    if written is not None and replayed is not None and replayed < written:
        return None  # this user's last write is not on the replica yet
    _local.replica, _local.primary = alias, primary
    connections[DEFAULT_DB_ALIAS] = replica
    return alias


def use_primary() -> None:
    """Back to the primary (the end of a view served by a replica; harmless otherwise)."""
    if serving_replica() is None:
        return
    connections[DEFAULT_DB_ALIAS] = _local.primary
    _local.replica = _local.primary = None


class ReplicaReads:
    """DRF view mixin: the actions in `replica_actions` (a viewset's action names, or an APIView's lower-case
    method names) only read, so a replica may serve them once the request is authenticated; `reads_only(request)`
    may refuse one request (a store read that refreshes TTLs writes)."""

    replica_actions: frozenset[str] = frozenset()

    def reads_only(self, request) -> bool:
        return True

    def _replica_read(self, request) -> bool:
        action = getattr(self, "action", None) or request.method.lower()
        return action in self.replica_actions

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if self._replica_read(request) and self.reads_only(request):
            request._request.memento_read_only = True  # not a write to remember (ReadYourWritesMiddleware)
            use_replica(request.user.pk if request.user.is_authenticated else None)

    def dispatch(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            use_primary()  # also when the view raised: the next request on this thread starts on the primary


class ReadYourWritesMiddleware:
    """After a request that may have written, remember the primary's WAL position for its user (only when
    replicas are configured)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if (replica_aliases() and request.method not in SAFE_METHODS and response.status_code < 400
                and not getattr(request, "memento_read_only", False) and user is not None
                and user.is_authenticated):
            remember_write(user.pk)
        return response
