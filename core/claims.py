"""Claims: which background work is being done right now, known to PostgreSQL itself.

A task that works on one object (a document, a message) holds a session-level advisory lock on it for as long as
it works (`claim`). PostgreSQL drops the lock the moment the worker's connection goes, so a worker killed with
SIGKILL, however abruptly, leaves its work unclaimed at once; the sweeps that send lost work again ask which of
their candidates nobody holds (`unclaimed`) and never send what a live worker is still doing. A second delivery
of a task whose object is claimed returns at once: one object is never worked on by two workers.

Keys are (kind, hashtext(id)) in PostgreSQL's two-integer advisory lock space (the store's transaction locks use
the one-bigint space: the two never meet). A hash collision only makes an object look busy until the next sweep.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum

from django.db import DatabaseError, connection, transaction


class ClaimKind(IntEnum):
    """What a claim is on: the first integer of its advisory lock key, one value per kind of work (the values
    are part of the running system's lock space: never change or reuse one)."""

    DOCUMENT = 1  # a document being processed (documents.processing)
    MESSAGE = 2  # a message being extracted (conversations.processing)
    EXTRACTION_OWNER = 3  # an owner whose extraction share is being worked on (conversations.processing)
    IMPORT = 5  # an import being written (imports.processing)
    DELIVERY = 8  # a webhook delivery being attempted (webhooks.services)
    OWNER_INDEXES = 7301  # the one sync of large owners' indexes at a time (memories.owner_indexes)
    CONSOLIDATION_OWNER = 7401  # an owner whose consolidation share is being worked on (profiles.consolidation)


@contextmanager
def claim(kind: ClaimKind, object_id) -> Iterator[bool]:
    """Hold the claim on `object_id` for the block; yields False (and holds nothing) when another session holds it.
    Not inside a transaction: the claim must outlive the block's own commits."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", [int(kind), str(object_id)])
        mine = cursor.fetchone()[0]
    try:
        yield mine
    finally:
        if mine:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", [int(kind), str(object_id)])
            except DatabaseError:  # the connection is gone, and the lock with it
                pass


def unclaimed(kind: ClaimKind, object_ids) -> list[str]:
    """The ids among `object_ids` that no session holds a claim on (run outside a transaction: the test takes each
    lock for an instant, within its own)."""
    ids = [str(i) for i in object_ids]
    if not ids:
        return []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM unnest(%s::text[]) AS id WHERE pg_try_advisory_xact_lock(%s, hashtext(id))",
            [ids, int(kind)],
        )
        return [row[0] for row in cursor.fetchall()]


def serialize(name: str) -> None:
    """Within the current transaction, wait for and hold the lock named `name` (a transaction-level advisory lock
    in the one-bigint space, released at commit or rollback): writers of one thing, e.g. one owner's queue, take
    turns. Unlike `claim`, it ends with the transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])
